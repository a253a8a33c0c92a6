//! The earlier drafts' constructs whose semantics go beyond one front end: events an entry did
//! not need, retries that belong to one action, branches not waited for. Timed tests run on
//! tokio's paused clock.

use swf_runtime::{Io, json};

mod leftover {
    swf_runtime::workflow!("workflows/earlier/leftover_events.sw.yaml");
}

struct NoFunctions;

impl leftover::LeftoverFunctions for NoFunctions {}

#[tokio::test(start_paused = true)]
async fn events_an_entry_did_not_name_stay_for_the_next_wait() {
    use leftover::LeftoverEvent as Event;
    let io = Io::standalone();
    for (kind, id) in [(Event::A, "a"), (Event::C, "c")] {
        io.deliver(kind.event(id, json!({})).expect("event builds"))
            .await
            .expect("delivered");
    }
    let started = tokio::time::Instant::now();
    let output = leftover::LeftoverWorkflow::new(NoFunctions)
        .run_with(json!({}), &io)
        .await
        .expect("runs");
    assert_eq!(output["ended"], json!("gotA"));
    assert_eq!(started.elapsed(), std::time::Duration::ZERO);
}
