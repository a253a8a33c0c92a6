//! Producing events: [`Io::produce`].

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use cloudevents::{EventBuilder, EventBuilderV10};
use serde_json::Value;

use super::io::Outbox;
use super::{EVENT_ERROR, EventSpec, Io};
use crate::error::ErrorObject;

/// Context attributes that the definition or the runtime sets, which a correlation value must
/// not overwrite.
const FIXED_ATTRIBUTES: &[&str] = &[
    "id",
    "source",
    "type",
    "specversion",
    "time",
    "datacontenttype",
    "dataschema",
];

impl Io {
    /// Produces an event of definition `spec` carrying `data`, and sends it where this
    /// instance's produced events go, waiting while that channel is full (never dropping it).
    ///
    /// The event is a CloudEvent 1.0 with the definition's `source` and `type`, the clock's time,
    /// an `id` unique to this instance (`<deployment ns>-<instance>-<step>-<n>`, so ids differ
    /// between instances, hosts and restarts without any process-wide state; under a durable
    /// host `<workflow>-<instance>-<revision>-<n>`, the same when a step runs again after a
    /// crash, so that consumers can drop the duplicate), and `data` as
    /// `application/json` (no data at all when `data` is `null`). When the definition has a
    /// correlation token and the instance is bound to a value for it, the event carries that
    /// value: as its `subject` if the token is `subject`, else as an extension attribute of
    /// that name, so that the event correlates with this instance downstream.
    ///
    /// Events sent to a channel whose receiver was dropped are discarded: dropping it is how a
    /// host's user declines produced events.
    ///
    /// # Errors
    /// An `EventError` when the event cannot be built (an empty `source`).
    pub async fn produce(&self, spec: &EventSpec, data: Value) -> Result<(), ErrorObject> {
        let number = self.inner.produced.fetch_add(1, Ordering::Relaxed) + 1;
        let mut builder = EventBuilderV10::new()
            .id(format!(
                "{}-{}-{number}",
                self.id_prefix(),
                self.inner.step.load(Ordering::Relaxed)
            ))
            .source(spec.source)
            .ty(spec.event_type)
            .time(self.clock().now().to_string());
        if !data.is_null() {
            builder = builder.data("application/json", data);
        }
        let correlated = spec.correlation.and_then(|attribute| {
            let value = self
                .inner
                .inbox()
                .lock()
                .correlation
                .get(attribute)?
                .to_owned();
            Some((attribute, value))
        });
        if let Some((attribute, value)) = correlated {
            builder = match attribute {
                "subject" => builder.subject(value),
                fixed if FIXED_ATTRIBUTES.contains(&fixed) => builder,
                extension => builder.extension(extension, value),
            };
        }
        #[cfg(feature = "otel")]
        if let Some(traceparent) = crate::trace::context::traceparent() {
            builder = builder.extension("traceparent", traceparent);
        }
        let event = builder.build().map_err(|err| {
            ErrorObject::new(
                EVENT_ERROR,
                format!("cannot build event `{}`: {err}", spec.name),
            )
        })?;
        crate::trace::event_produced(&event);
        match &self.inner.outbox {
            Outbox::Collect(produced) => produced
                .get_or_init(Arc::default)
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(event),
            Outbox::Channel(sender) => {
                // An error only means the receiver is gone: see above.
                let _ = sender.send(event).await;
            }
        }
        Ok(())
    }
}
