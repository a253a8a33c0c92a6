//! What `swf` prints: text for people, or JSON for scripts.

use std::fmt::Write as _;

use serde_json::{Value, json};
use swf_runtime::store::{Claimed, HistoryEntry, InstanceSummary, Purged, StoredEvent};
use swf_runtime::{AttributesReader, InstanceId, Timestamp};

/// The listing: one line per instance (or one JSON object per line).
pub fn list(instances: &[InstanceSummary], as_json: bool) -> String {
    let mut out = String::new();
    if as_json {
        for instance in instances {
            let _ = writeln!(out, "{}", summary_json(instance));
        }
        return out;
    }
    if instances.is_empty() {
        return String::from("no instances\n");
    }
    let _ = writeln!(
        out,
        "{:>8}  {:<9}  {:<24}  {:>8}  {:<20}  POSITION",
        "ID", "STATUS", "WORKFLOW", "REVISION", "UPDATED"
    );
    for instance in instances {
        let workflow = match &instance.version {
            Some(version) => format!("{} {version}", instance.workflow),
            None => instance.workflow.clone(),
        };
        let _ = writeln!(
            out,
            "{:>8}  {:<9}  {:<24}  {:>8}  {:<20}  {}",
            instance.id,
            instance.status,
            workflow,
            instance.revision,
            instance.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
            instance.position
        );
    }
    out
}

fn summary_json(instance: &InstanceSummary) -> Value {
    json!({
        "id": instance.id,
        "workflow": instance.workflow,
        "version": instance.version,
        "status": instance.status.as_str(),
        "position": instance.position,
        "revision": instance.revision,
        "created_at": instance.created_at.to_string(),
        "updated_at": instance.updated_at.to_string(),
    })
}

/// One instance: where it is, its state and data, its inbox, its history.
pub fn show(claimed: &Claimed, history: &[HistoryEntry], as_json: bool) -> String {
    let record = &claimed.record;
    let state: Value =
        serde_json::from_str(&record.state).unwrap_or(Value::String(record.state.clone()));
    if as_json {
        let shown = json!({
            "id": record.id,
            "workflow": record.definition.workflow,
            "version": record.definition.version,
            "definition": record.definition.hash,
            "status": record.status.as_str(),
            "position": record.position,
            "revision": record.revision,
            "wake_at": record.wake_at.map(|at| at.to_string()),
            "waits": record.waits,
            "correlation": record.correlation.iter().map(|(a, v)| json!([a, v])).collect::<Vec<_>>(),
            "parent": record.parent,
            "lease": record.lease.as_ref().map(|lease| json!({"worker": lease.worker, "until": lease.until.to_string()})),
            "outcome": record.outcome,
            "created_at": record.created_at.to_string(),
            "updated_at": record.updated_at.to_string(),
            "start_key": record.start_key,
            "state": state,
            "inbox": claimed.inbox.iter().map(event_json).collect::<Vec<_>>(),
            "history": history.iter().map(history_json).collect::<Vec<_>>(),
        });
        return format!("{shown:#}\n");
    }
    let mut out = String::new();
    let version = record
        .definition
        .version
        .as_deref()
        .map(|version| format!(" version {version}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "instance {} of `{}`{version} (definition {})",
        record.id, record.definition.workflow, record.definition.hash
    );
    let _ = writeln!(out, "status       {}", record.status);
    let _ = writeln!(out, "position     {}", record.position);
    let _ = writeln!(out, "revision     {}", record.revision);
    if !record.waits.is_empty() || record.wake_at.is_some() {
        let events = if record.waits.is_empty() {
            String::from("no event")
        } else {
            record.waits.join(", ")
        };
        let until = record
            .wake_at
            .map(|at| format!(" until {at}"))
            .unwrap_or_default();
        let _ = writeln!(out, "waits for    {events}{until}");
    }
    if !record.correlation.is_empty() {
        let pairs: Vec<String> = record
            .correlation
            .iter()
            .map(|(attribute, value)| format!("{attribute}={value}"))
            .collect();
        let _ = writeln!(out, "correlation  {}", pairs.join(", "));
    }
    if let Some(key) = &record.start_key {
        let _ = writeln!(out, "start key    {key:?}");
    }
    if let Some(parent) = record.parent {
        let _ = writeln!(out, "parent       instance {parent}");
    }
    if let Some(lease) = &record.lease {
        let _ = writeln!(out, "leased to    {} until {}", lease.worker, lease.until);
    }
    let _ = writeln!(out, "created      {}", record.created_at);
    let _ = writeln!(out, "updated      {}", record.updated_at);
    if let Some(outcome) = &record.outcome {
        let _ = writeln!(out, "outcome      {outcome}");
    }
    let _ = writeln!(out, "state\n{}", indent(&format!("{state:#}")));
    if !claimed.inbox.is_empty() {
        let _ = writeln!(out, "inbox");
        for stored in &claimed.inbox {
            let _ = writeln!(
                out,
                "  #{} {} {} (type {}, received {})",
                stored.seq,
                stored.event.source(),
                stored.event.id(),
                stored.event.ty(),
                stored.received_at
            );
        }
    }
    let _ = writeln!(out, "history");
    let mut previous: Option<u64> = None;
    for entry in history {
        // Every revision writes an entry: a gap is what a worker's history limit dropped.
        if let Some(dropped) = previous.and_then(|before| entry.revision.checked_sub(before + 1))
            && dropped > 0
        {
            let entries = if dropped == 1 { "entry" } else { "entries" };
            let _ = writeln!(out, "  ...   {dropped} {entries} dropped (history limit)");
        }
        previous = Some(entry.revision);
        let _ = writeln!(out, "  {}", history_line(entry));
    }
    out
}

fn history_line(entry: &HistoryEntry) -> String {
    let moved = if entry.from.is_empty() || entry.from == entry.to {
        entry.to.clone()
    } else {
        format!("{} -> {}", entry.from, entry.to)
    };
    let mut line = format!(
        "{:>4}  {}  {:<9}  {moved}",
        entry.revision,
        entry.at.strftime("%Y-%m-%d %H:%M:%S%.3f"),
        entry.kind.as_str()
    );
    if !entry.consumed.is_empty() {
        let _ = write!(line, "  took [{}]", entry.consumed.join(", "));
    }
    if !entry.produced.is_empty() {
        let _ = write!(line, "  produced [{}]", entry.produced.join(", "));
    }
    if !entry.detail.is_null() {
        let _ = write!(line, "  {}", entry.detail);
    }
    line
}

fn history_json(entry: &HistoryEntry) -> Value {
    json!({
        "revision": entry.revision,
        "at": entry.at.to_string(),
        "kind": entry.kind.as_str(),
        "from": entry.from,
        "to": entry.to,
        "consumed": entry.consumed,
        "produced": entry.produced,
        "detail": entry.detail,
    })
}

fn event_json(stored: &StoredEvent) -> Value {
    json!({
        "seq": stored.seq,
        "source": stored.event.source().to_string(),
        "id": stored.event.id(),
        "type": stored.event.ty(),
        "received_at": stored.received_at.to_string(),
    })
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What `cancel` did.
pub fn cancelled(id: InstanceId, leftovers: &[StoredEvent], as_json: bool) -> String {
    if as_json {
        let events: Vec<Value> = leftovers.iter().map(event_json).collect();
        return format!("{}\n", json!({"cancelled": id, "untaken_events": events}));
    }
    let mut out = format!("cancelled instance {id}\n");
    if !leftovers.is_empty() {
        let _ = writeln!(
            out,
            "{} event(s) in its inbox will never be taken:",
            leftovers.len()
        );
        for stored in leftovers {
            let _ = writeln!(
                out,
                "  #{} {} {}",
                stored.seq,
                stored.event.source(),
                stored.event.id()
            );
        }
    }
    out
}

/// What `redrive` did.
pub fn redriven(claimed: &Claimed, as_json: bool) -> String {
    let record = &claimed.record;
    if as_json {
        return format!(
            "{}\n",
            json!({"redriven": record.id, "position": record.position, "revision": record.revision})
        );
    }
    format!(
        "instance {} is runnable again at `{}` (revision {}): a worker of `{}` runs the failed step again\n",
        record.id, record.position, record.revision, record.definition.workflow
    )
}

/// What `purge` removed.
pub fn purged(purged: &Purged, before: Timestamp, as_json: bool) -> String {
    if as_json {
        return format!(
            "{}\n",
            json!({"instances": purged.instances, "events": purged.events, "before": before.to_string()})
        );
    }
    format!(
        "purged {} instance(s) that ended before {before} and {} event(s) received before then \
         that no instance holds\n",
        purged.instances, purged.events
    )
}
