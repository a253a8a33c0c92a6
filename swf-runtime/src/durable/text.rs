//! Text no store can hold alike. PostgreSQL's `text` holds no U+0000 (nor does CloudEvents
//! allow it in a string), and the stores keep as text an event's source and id, the correlation
//! values an instance is bound to, the start group keys they make, and the worker's name. What holds one is
//! refused here, on every store alike, before it reaches the store: in a batch of deliveries or
//! creations it would fail the one transaction of every other caller on PostgreSQL, and with an
//! error that says to retry.

use std::collections::BTreeMap;

use cloudevents::AttributesReader;

use crate::store::{Delivery, StoreError, StoreErrorKind};

/// Why: the end of each refusal.
const WHY: &str = "holds the character U+0000, which CloudEvents does not allow in a string \
                   and PostgreSQL cannot store";

/// `Invalid` when the event of `delivery` has U+0000 in its id, its source, or a value of the
/// correlation attributes of the definitions it matches.
pub(super) fn refuse_unstorable_event(delivery: &Delivery) -> Result<(), StoreError> {
    let event = &delivery.event;
    let (id, source) = (event.id(), event.source().as_str());
    let field = if id.contains('\0') {
        String::from("id")
    } else if source.contains('\0') {
        String::from("source")
    } else {
        let correlation = delivery
            .targets
            .iter()
            .find_map(|target| match &target.correlation {
                Some((attribute, Some(value))) if value.contains('\0') => Some(attribute),
                _ => None,
            });
        match correlation {
            Some(attribute) => format!("correlation attribute `{attribute}`"),
            None => return Ok(()),
        }
    };
    Err(StoreError::new(
        StoreErrorKind::Invalid,
        format!("the event {id:?} from {source:?} is refused: its {field} {WHY}"),
    ))
}

/// `Invalid` when an attribute or a value of `correlation` (an instance's from its start) has
/// U+0000.
pub(super) fn refuse_unstorable_correlation(
    correlation: &BTreeMap<String, String>,
) -> Result<(), StoreError> {
    match correlation
        .iter()
        .find(|(attribute, value)| attribute.contains('\0') || value.contains('\0'))
    {
        Some((attribute, value)) => Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("the correlation {attribute:?} = {value:?} is refused: it {WHY}"),
        )),
        None => Ok(()),
    }
}

/// `Invalid` when the worker's name `worker` (written with every lease it takes) has U+0000:
/// every claim and commit of such a worker would fail on PostgreSQL.
pub(super) fn refuse_unstorable_worker(worker: &str) -> Result<(), StoreError> {
    if worker.contains('\0') {
        return Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("the worker name {worker:?} is refused: it {WHY}"),
        ));
    }
    Ok(())
}
