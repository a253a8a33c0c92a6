//! The conformance suite every [`Store`] passes: small scenarios, each on a fresh store.
//!
//! A store's tests run every check with [`conformance_tests!`], given a fixture that opens a
//! fresh store (or returns `None` to skip, for a server that is not there).

use std::collections::BTreeSet;
use std::time::Duration;

use cloudevents::{Event, EventBuilder, EventBuilderV10};
use jiff::Timestamp;
use serde_json::json;

use super::*;

/// Generates one `#[tokio::test]` per conformance check, each on a store from `$fixture`
/// (an async fn returning `Option<(store, guard)>`; the guard cleans up when dropped).
macro_rules! conformance_tests {
    ($fixture:path) => {
        conformance_tests!(@each $fixture;
            register_keeps_first_deployment,
            create_claim_lease_and_renew,
            concurrent_claims_are_disjoint,
            commit_conflicts_write_nothing,
            commit_writes_everything,
            commit_is_all_or_nothing,
            ending_removes_waits_bindings_and_inbox,
            duplicates_are_detected_per_workflow,
            correlated_events_reach_bound_instances,
            correlated_events_bind_the_longest_waiter,
            uncorrelated_events_reach_every_waiter,
            only_waiting_instances_that_wait_are_woken,
            events_start_instances_now,
            start_groups_complete_oldest_first,
            start_groups_expire,
            unmatched_events_keep_their_reason,
            next_wake_follows_work_and_leases,
            outbox_is_leased_and_marked,
            list_pages_newest_first,
            instance_and_history,
            cancel_ends_and_fences,
            redrive_resumes_failed,
            events_arriving_during_a_step_are_not_lost,
            a_delivery_leases_what_it_wakes,
            a_delivery_leases_no_instance_another_worker_holds,
            two_workers_delivering_get_one_lease,
            a_batch_may_step_one_instance_twice,
            one_callers_failure_is_not_anothers,
            a_commit_may_move_an_instance_to_another_release,
            a_start_key_creates_once_per_workflow,
            purge_removes_what_ended_and_what_nothing_holds,
            purge_goes_in_rounds_oldest_first,
            a_commit_trims_the_history,
            a_pinned_worker_takes_only_its_version,
            each_workflow_claims_its_own_outbox,
            a_failed_instance_keeps_its_inbox_and_bindings_for_a_redrive,
            a_purge_removes_a_failed_instances_inbox_and_bindings,
            a_cancelled_instance_keeps_its_reason,
            a_failed_instance_may_be_cancelled,
        );
    };
    (@each $fixture:path; $($check:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                if let Some((store, guard)) = $fixture().await {
                    crate::store::conformance::$check(&store).await;
                    drop(store);
                    drop(guard);
                }
            }
        )*
    };
}
pub(crate) use conformance_tests;

/// An instant `seconds` after the suite's epoch.
pub(crate) fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + seconds).unwrap()
}

const WORKER: &str = "worker-a";
const OTHER: &str = "worker-b";
const LEASE: Duration = Duration::from_secs(30);

fn definition(workflow: &str) -> Definition {
    Definition {
        workflow: workflow.to_string(),
        version: Some("1.0".to_string()),
        hash: format!("{workflow}-hash"),
    }
}

fn new_instance(workflow: &str, status: Status, waits: &[&str]) -> NewInstance {
    NewInstance {
        definition: definition(workflow),
        state: r#"{"at":"start"}"#.to_string(),
        position: "Start".to_string(),
        status,
        wake_at: None,
        waits: waits.iter().map(|wait| wait.to_string()).collect(),
        correlation: Vec::new(),
        inbox: Vec::new(),
        parent: None,
        lease: None,
        detail: json!({"input": {}}),
        start_key: None,
    }
}

fn bound(mut instance: NewInstance, attribute: &str, value: &str) -> NewInstance {
    instance
        .correlation
        .push((attribute.to_string(), value.to_string()));
    instance
}

fn event(id: &str) -> Event {
    EventBuilderV10::new()
        .id(id)
        .source("urn:test")
        .ty("test.event")
        .build()
        .unwrap()
}

pub(crate) fn delivery(workflow: &str, id: &str, targets: Vec<Target>) -> Delivery {
    Delivery {
        workflow: workflow.to_string(),
        event: event(id),
        targets,
        start: None,
        unmatched: "nobody waits".to_string(),
        claim: None,
    }
}

fn target(definition: &str) -> Target {
    Target {
        definition: definition.to_string(),
        correlation: None,
    }
}

fn correlated(definition: &str, attribute: &str, value: Option<&str>) -> Target {
    Target {
        definition: definition.to_string(),
        correlation: Some((attribute.to_string(), value.map(str::to_string))),
    }
}

/// A commit of `claimed` by `worker` to `status`, changing nothing else.
fn step(claimed: &Claimed, worker: &str, status: Status) -> Commit {
    Commit {
        instance: claimed.record.id,
        worker: worker.to_string(),
        revision: claimed.record.revision,
        state: r#"{"at":"next"}"#.to_string(),
        definition: None,
        position: "Next".to_string(),
        status,
        wake_at: None,
        waits: Vec::new(),
        bind: Vec::new(),
        consumed: Vec::new(),
        produced: Vec::new(),
        children: Vec::new(),
        outcome: None,
        lease_until: None,
        trim_history_through: None,
        history: HistoryEntry {
            revision: 999,
            at: at(0),
            kind: HistoryKind::Stepped,
            from: claimed.record.position.clone(),
            to: "Next".to_string(),
            consumed: Vec::new(),
            produced: Vec::new(),
            detail: json!({"worker": worker}),
        },
    }
}

async fn create_one<S: Store>(store: &S, instance: NewInstance, now: Timestamp) -> InstanceId {
    let ids = store.create(vec![instance], now).await.unwrap();
    assert_eq!(ids.len(), 1);
    ids[0]
}

async fn claim_one<S: Store>(store: &S, id: InstanceId, worker: &str, now: Timestamp) -> Claimed {
    let mut claimed = store
        .claim_ids(&[id], &Versions::Any, worker, now, LEASE)
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "instance {id} should be claimable");
    claimed.remove(0)
}

async fn record<S: Store>(store: &S, id: InstanceId) -> Claimed {
    store.instance(id).await.unwrap().unwrap()
}

fn seqs(inbox: &[StoredEvent]) -> Vec<u64> {
    inbox.iter().map(|stored| stored.seq).collect()
}

fn committed(result: &CommitResult) -> (u64, Vec<InstanceId>, Vec<StoredEvent>) {
    match result {
        CommitResult::Committed {
            revision,
            children,
            leftovers,
        } => (*revision, children.clone(), leftovers.clone()),
        CommitResult::Conflict { found } => panic!("unexpected conflict: {found}"),
    }
}

/// A delivery that asks to lease what it wakes to `worker`, at most `limit` instances.
fn claiming(mut delivery: Delivery, worker: &str, limit: usize) -> Delivery {
    delivery.claim = Some(WakeClaim {
        worker: worker.to_string(),
        lease: LEASE,
        limit,
        versions: Versions::Any,
    });
    delivery
}

fn claimed_by_delivery(routed: &Routed) -> Vec<Claimed> {
    match routed {
        Routed::Delivered { claimed, .. } => claimed.clone(),
        other => panic!("expected a delivery, got {other:?}"),
    }
}

fn delivered(routed: &Routed) -> (Vec<InstanceId>, Vec<InstanceId>) {
    match routed {
        Routed::Delivered {
            instances, woken, ..
        } => (instances.clone(), woken.clone()),
        other => panic!("expected a delivery, got {other:?}"),
    }
}

pub(crate) async fn register_keeps_first_deployment<S: Store>(store: &S) {
    let first = store.register(&definition("wf"), at(10)).await.unwrap();
    assert_eq!(first, at(10));
    let again = store.register(&definition("wf"), at(50)).await.unwrap();
    assert_eq!(
        again,
        at(10),
        "a later registration keeps the first deployment"
    );
    let mut changed = definition("wf");
    changed.hash = "another-hash".to_string();
    assert_eq!(store.register(&changed, at(60)).await.unwrap(), at(60));
}

fn keyed(workflow: &str, key: &str, state: &str) -> NewInstance {
    let mut instance = new_instance(workflow, Status::Runnable, &[]);
    instance.start_key = Some(key.to_string());
    instance.state = state.to_string();
    instance
}

pub(crate) async fn a_start_key_creates_once_per_workflow<S: Store>(store: &S) {
    let first = create_one(store, keyed("wf", "order-7", r#"{"n":1}"#), at(0)).await;
    // Claimed meanwhile: the second start leaves it as it is, its lease too.
    claim_one(store, first, WORKER, at(1)).await;
    let ids = store
        .create(
            vec![
                keyed("wf", "order-7", r#"{"n":2}"#),
                keyed("wf", "order-8", r#"{"n":3}"#),
                keyed("wf", "order-8", r#"{"n":4}"#),
                keyed("other", "order-7", r#"{"n":5}"#),
                new_instance("wf", Status::Runnable, &[]),
                new_instance("wf", Status::Runnable, &[]),
            ],
            at(2),
        )
        .await
        .unwrap();
    assert_eq!(ids[0], first, "the key's instance");
    assert_eq!(ids[1], ids[2], "a key twice in one call: one instance");
    let distinct: BTreeSet<InstanceId> = ids.iter().copied().collect();
    assert_eq!(distinct.len(), 5, "{ids:?}");
    let kept = record(store, first).await.record;
    assert_eq!(kept.start_key.as_deref(), Some("order-7"));
    assert_eq!(kept.state, r#"{"n":1}"#);
    assert_eq!(
        kept.lease.map(|lease| lease.worker).as_deref(),
        Some(WORKER)
    );
    assert_eq!(kept.created_at, at(0));
    assert_eq!(
        store.history(first).await.unwrap().len(),
        1,
        "one Started entry"
    );
    assert_eq!(record(store, ids[1]).await.record.state, r#"{"n":3}"#);
    assert_eq!(record(store, ids[3]).await.record.state, r#"{"n":5}"#);
    assert_eq!(record(store, ids[4]).await.record.start_key, None);
    let all = store
        .list(&ListFilter {
            limit: 100,
            ..ListFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 5, "{all:?}");
}

/// SQL (the same on both stores) that takes a store back to schema version 1, the release
/// before start keys and retention: as a store of that release left it.
pub(crate) const BACK_TO_VERSION_1: &str = "DROP INDEX swf_instance_start_key;
    ALTER TABLE swf_instance DROP COLUMN start_key;
    DROP INDEX swf_instance_ended;
    DROP INDEX swf_event_received;
    DROP INDEX swf_inbox_event;
    DROP INDEX swf_start_member_event;
    DROP INDEX swf_outbox_instance;
    DELETE FROM swf_schema_version WHERE version >= 2;";

/// An instance for a store about to be taken back to version 1.
pub(crate) async fn before_migration<S: Store>(store: &S) -> InstanceId {
    create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await
}

/// A store of version 1, opened again (and so migrated), with `existing` made before.
pub(crate) async fn after_migration<S: Store>(store: &S, existing: InstanceId) {
    let kept = record(store, existing).await.record;
    assert_eq!((kept.status, kept.created_at), (Status::Runnable, at(0)));
    let first = create_one(store, keyed("wf", "k", "{}"), at(1)).await;
    let again = create_one(store, keyed("wf", "k", "{}"), at(2)).await;
    assert_eq!(first, again);
    assert!(first > existing);
    end_at(store, first, Status::Completed, Vec::new(), at(3)).await;
    let purged = store.purge(&purging(None, at(4), 10)).await.unwrap();
    assert_eq!(purged.instances, 1, "{purged:?}");
}

pub(crate) async fn create_claim_lease_and_renew<S: Store>(store: &S) {
    let ids = store
        .create(
            vec![
                new_instance("wf", Status::Runnable, &[]),
                new_instance("wf", Status::Waiting, &["Paid"]),
            ],
            at(0),
        )
        .await
        .unwrap();
    assert!(ids[0] < ids[1], "ids increase");
    let created = record(store, ids[0]).await.record;
    assert_eq!(created.revision, 0);
    assert_eq!(created.status, Status::Runnable);
    assert_eq!(created.definition, definition("wf"));
    assert_eq!(created.created_at, at(0));
    assert_eq!(created.lease, None);
    assert_eq!(
        record(store, ids[1]).await.record.waits,
        vec!["Paid".to_string()]
    );

    let claimed = store
        .claim("wf", &Versions::Any, WORKER, at(1), LEASE, 10)
        .await
        .unwrap();
    let claimed_ids: Vec<_> = claimed.iter().map(|claimed| claimed.record.id).collect();
    assert_eq!(claimed_ids, vec![ids[0]], "only the runnable one has work");
    let lease = claimed[0].record.lease.clone().unwrap();
    assert_eq!(lease.worker, WORKER);
    assert_eq!(lease.until, at(31));
    assert!(
        store
            .claim("wf", &Versions::Any, OTHER, at(20), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .claim("wf", &Versions::Any, OTHER, at(31), LEASE, 10)
            .await
            .unwrap()
            .is_empty(),
        "until is inclusive"
    );
    assert!(
        store
            .claim("other-wf", &Versions::Any, OTHER, at(40), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );

    assert_eq!(
        store.renew(&[ids[0]], OTHER, at(100)).await.unwrap(),
        vec![]
    );
    assert_eq!(
        store.renew(&[ids[0]], WORKER, at(100)).await.unwrap(),
        vec![ids[0]]
    );
    assert!(
        store
            .claim("wf", &Versions::Any, OTHER, at(60), LEASE, 10)
            .await
            .unwrap()
            .is_empty(),
        "renewed"
    );
    let taken = store
        .claim("wf", &Versions::Any, OTHER, at(101), LEASE, 10)
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "an expired lease makes it claimable");
    assert_eq!(taken[0].record.lease.as_ref().unwrap().worker, OTHER);
    assert_eq!(
        store.renew(&[ids[0]], WORKER, at(200)).await.unwrap(),
        vec![],
        "taken over"
    );

    // A waiting instance with a deadline has work once it is due.
    let mut timed = new_instance("wf", Status::Waiting, &[]);
    timed.wake_at = Some(at(500));
    let timed = create_one(store, timed, at(0)).await;
    assert!(
        store
            .claim_ids(&[timed], &Versions::Any, WORKER, at(499), LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .claim_ids(&[timed], &Versions::Any, WORKER, at(500), LEASE)
            .await
            .unwrap()
            .len(),
        1
    );
}

pub(crate) async fn concurrent_claims_are_disjoint<S: Store>(store: &S) {
    let instances = (0..120)
        .map(|_| new_instance("wf", Status::Runnable, &[]))
        .collect();
    let ids = store.create(instances, at(0)).await.unwrap();
    let mut tasks = Vec::new();
    for worker in 0..12 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let worker = format!("worker-{worker}");
            let mut mine = Vec::new();
            for _ in 0..3 {
                let claimed = store
                    .claim("wf", &Versions::Any, &worker, at(1), LEASE, 7)
                    .await
                    .unwrap();
                mine.extend(claimed.into_iter().map(|claimed| claimed.record.id));
            }
            mine
        }));
    }
    let mut seen = BTreeSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(seen.insert(id), "instance {id} was claimed twice");
        }
    }
    let rest = store
        .claim("wf", &Versions::Any, "last", at(1), LEASE, 1000)
        .await
        .unwrap();
    for claimed in rest {
        assert!(
            seen.insert(claimed.record.id),
            "instance {} was claimed twice",
            claimed.record.id
        );
    }
    assert_eq!(seen, ids.into_iter().collect::<BTreeSet<_>>());
}

pub(crate) async fn commit_conflicts_write_nothing<S: Store>(store: &S) {
    let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let claimed = claim_one(store, id, WORKER, at(1)).await;
    let before = record(store, id).await;

    let mut stale = step(&claimed, WORKER, Status::Completed);
    stale.revision = 5;
    stale.produced = vec![event("out-1")];
    let mut foreign = step(&claimed, OTHER, Status::Completed);
    foreign.produced = vec![event("out-2")];
    let results = store.commit(vec![stale, foreign], at(2)).await.unwrap();
    for result in &results {
        match result {
            CommitResult::Conflict { found } => assert!(found.contains("revision 0"), "{found}"),
            other => panic!("expected a conflict, got {other:?}"),
        }
    }
    assert_eq!(record(store, id).await, before, "a conflict writes nothing");
    assert_eq!(store.history(id).await.unwrap().len(), 1);
    assert!(
        store
            .claim_outbox("wf", WORKER, at(3), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );

    // One conflict does not undo another element's commit.
    let good = step(&claimed, WORKER, Status::Runnable);
    let mut bad = step(&claimed, WORKER, Status::Runnable);
    bad.revision = 9;
    let results = store.commit(vec![bad, good], at(4)).await.unwrap();
    assert!(matches!(results[0], CommitResult::Conflict { .. }));
    assert_eq!(committed(&results[1]).0, 1);
}

pub(crate) async fn commit_writes_everything<S: Store>(store: &S) {
    let id = create_one(
        store,
        new_instance("wf", Status::Waiting, &["A", "B"]),
        at(0),
    )
    .await;
    let other = create_one(store, new_instance("wf", Status::Waiting, &["A"]), at(5)).await;
    let routed = store
        .deliver(
            vec![
                delivery("wf", "in-1", vec![target("A")]),
                delivery("wf", "in-2", vec![target("B")]),
            ],
            at(10),
        )
        .await
        .unwrap();
    let first_seq = routed[0].seq();
    let claimed = claim_one(store, id, WORKER, at(11)).await;
    assert_eq!(seqs(&claimed.inbox), vec![first_seq, routed[1].seq()]);

    let mut commit = step(&claimed, WORKER, Status::Waiting);
    commit.consumed = vec![first_seq];
    commit.produced = vec![event("out-1"), event("out-2")];
    commit.bind = vec![("orderId".to_string(), "o-1".to_string())];
    commit.waits = vec!["A".to_string(), "C".to_string()];
    commit.wake_at = Some(at(1000));
    commit.children = vec![new_instance("child-wf", Status::Runnable, &[])];
    commit.lease_until = Some(at(60));
    commit.history.consumed = vec!["urn:test in-1".to_string()];
    let results = store.commit(vec![commit], at(12)).await.unwrap();
    let (revision, children, leftovers) = committed(&results[0]);
    assert_eq!(revision, 1);
    assert!(leftovers.is_empty());
    assert_eq!(children.len(), 1);

    let after = record(store, id).await;
    assert_eq!(after.record.revision, 1);
    assert_eq!(after.record.state, r#"{"at":"next"}"#);
    assert_eq!(after.record.position, "Next");
    assert_eq!(after.record.status, Status::Waiting);
    assert_eq!(after.record.wake_at, Some(at(1000)));
    assert_eq!(after.record.waits, vec!["A".to_string(), "C".to_string()]);
    assert_eq!(
        after.record.correlation,
        vec![("orderId".to_string(), "o-1".to_string())]
    );
    assert_eq!(
        after
            .record
            .lease
            .as_ref()
            .map(|lease| (lease.worker.as_str(), lease.until)),
        Some((WORKER, at(60)))
    );
    assert_eq!(after.record.updated_at, at(12));
    assert_eq!(
        seqs(&after.inbox),
        vec![routed[1].seq()],
        "the consumed event left the inbox"
    );

    let child = record(store, children[0]).await.record;
    assert_eq!(child.parent, Some(id));
    assert_eq!(child.definition.workflow, "child-wf");

    let outbox = store
        .claim_outbox("wf", WORKER, at(13), LEASE, 10)
        .await
        .unwrap();
    let produced: Vec<_> = outbox.iter().map(|entry| entry.event.clone()).collect();
    assert_eq!(produced, vec![event("out-1"), event("out-2")]);
    assert!(outbox.iter().all(|entry| entry.instance == id));

    let history = store.history(id).await.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].revision, 1, "the store writes the new revision");
    assert_eq!(history[1].kind, HistoryKind::Stepped);
    assert_eq!(history[1].consumed, vec!["urn:test in-1".to_string()]);
    assert_eq!(history[1].at, at(12));

    // `A` kept its age (since 0), so `id` still waited longer for it than `other` (since 5);
    // a binding already made keeps its value.
    let mut again = step(&after, WORKER, Status::Waiting);
    again.waits = vec!["A".to_string()];
    again.bind = vec![("orderId".to_string(), "o-2".to_string())];
    committed(&store.commit(vec![again], at(20)).await.unwrap()[0]);
    assert_eq!(
        record(store, id).await.record.correlation,
        vec![("orderId".to_string(), "o-1".to_string())]
    );
    let routed = store
        .deliver(
            vec![delivery(
                "wf",
                "in-3",
                vec![correlated("A", "customer", Some("c-1"))],
            )],
            at(30),
        )
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]).0, vec![id]);
    assert_ne!(id, other);
}

pub(crate) async fn commit_is_all_or_nothing<S: Store>(store: &S) {
    let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let claimed = claim_one(store, id, WORKER, at(1)).await;
    let before = record(store, id).await;
    let mut commit = step(&claimed, WORKER, Status::Waiting);
    commit.produced = vec![event("out-1")];
    commit.bind = vec![("orderId".to_string(), "o-1".to_string())];
    // A child that cannot be created makes the whole call fail.
    commit.children = vec![
        new_instance("wf", Status::Runnable, &[]),
        new_instance("wf", Status::Completed, &[]),
    ];
    let error = store.commit(vec![commit], at(2)).await.unwrap_err();
    assert_eq!(error.kind, StoreErrorKind::Invalid, "{error}");
    assert_eq!(record(store, id).await, before);
    assert_eq!(store.history(id).await.unwrap().len(), 1);
    assert!(
        store
            .claim_outbox("wf", WORKER, at(3), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let listed = store
        .list(&ListFilter {
            limit: 10,
            ..ListFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), 1, "no child was created");
}

pub(crate) async fn ending_removes_waits_bindings_and_inbox<S: Store>(store: &S) {
    let id = create_one(
        store,
        bound(
            new_instance("wf", Status::Runnable, &["A"]),
            "orderId",
            "o-1",
        ),
        at(0),
    )
    .await;
    let routed = store
        .deliver(
            vec![
                delivery("wf", "e-1", vec![correlated("A", "orderId", Some("o-1"))]),
                delivery("wf", "e-2", vec![correlated("B", "orderId", Some("o-1"))]),
            ],
            at(1),
        )
        .await
        .unwrap();
    let claimed = claim_one(store, id, WORKER, at(2)).await;
    assert_eq!(claimed.inbox.len(), 2);
    let mut commit = step(&claimed, WORKER, Status::Completed);
    commit.consumed = vec![routed[0].seq()];
    commit.outcome = Some(json!({"total": 3}));
    commit.waits = vec!["A".to_string()];
    commit.history.kind = HistoryKind::Completed;
    let (_, _, leftovers) = committed(&store.commit(vec![commit], at(3)).await.unwrap()[0]);
    assert_eq!(
        seqs(&leftovers),
        vec![routed[1].seq()],
        "what it never took comes back"
    );
    let ended = record(store, id).await;
    assert_eq!(ended.record.status, Status::Completed);
    assert_eq!(ended.record.outcome, Some(json!({"total": 3})));
    assert!(ended.record.waits.is_empty());
    assert!(ended.record.correlation.is_empty());
    assert!(ended.inbox.is_empty());
    assert_eq!(ended.record.lease, None);
    assert_eq!(
        store.next_wake("wf", &Versions::Any, at(4)).await.unwrap(),
        None
    );
    let routed = store
        .deliver(
            vec![delivery(
                "wf",
                "e-3",
                vec![correlated("A", "orderId", Some("o-1"))],
            )],
            at(5),
        )
        .await
        .unwrap();
    assert!(
        matches!(routed[0], Routed::Unmatched { .. }),
        "an ended instance receives nothing: {routed:?}"
    );
}

pub(crate) async fn duplicates_are_detected_per_workflow<S: Store>(store: &S) {
    let first = store
        .deliver(vec![delivery("wf", "e-1", vec![])], at(0))
        .await
        .unwrap();
    let seq = first[0].seq();
    let again = store
        .deliver(
            vec![delivery("wf", "e-1", vec![]), delivery("wf", "e-1", vec![])],
            at(1),
        )
        .await
        .unwrap();
    assert_eq!(
        again,
        vec![Routed::Duplicate { seq }, Routed::Duplicate { seq }]
    );
    let elsewhere = store
        .deliver(vec![delivery("other-wf", "e-1", vec![])], at(2))
        .await
        .unwrap();
    assert!(matches!(elsewhere[0], Routed::Unmatched { .. }));
    assert!(elsewhere[0].seq() > seq, "seqs increase");
    let mut other_source = delivery("wf", "e-1", vec![]);
    other_source.event = EventBuilderV10::new()
        .id("e-1")
        .source("urn:another")
        .ty("test.event")
        .build()
        .unwrap();
    let routed = store.deliver(vec![other_source], at(3)).await.unwrap();
    assert!(
        !matches!(routed[0], Routed::Duplicate { .. }),
        "the key is source and id"
    );
}

pub(crate) async fn correlated_events_reach_bound_instances<S: Store>(store: &S) {
    let one = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["Paid"]),
            "orderId",
            "o-1",
        ),
        at(0),
    )
    .await;
    let also = create_one(
        store,
        bound(new_instance("wf", Status::Waiting, &[]), "orderId", "o-1"),
        at(1),
    )
    .await;
    let other = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["Paid"]),
            "orderId",
            "o-2",
        ),
        at(2),
    )
    .await;
    let elsewhere = create_one(
        store,
        bound(
            new_instance("other-wf", Status::Waiting, &["Paid"]),
            "orderId",
            "o-1",
        ),
        at(3),
    )
    .await;
    let routed = store
        .deliver(
            vec![delivery(
                "wf",
                "e-1",
                vec![correlated("Paid", "orderId", Some("o-1"))],
            )],
            at(10),
        )
        .await
        .unwrap();
    let (instances, woken) = delivered(&routed[0]);
    assert_eq!(instances, vec![one, also]);
    assert_eq!(woken, vec![one]);
    assert_eq!(record(store, one).await.record.status, Status::Runnable);
    assert_eq!(record(store, also).await.record.status, Status::Waiting);
    assert_eq!(
        seqs(&record(store, also).await.inbox),
        vec![routed[0].seq()]
    );
    assert!(record(store, other).await.inbox.is_empty());
    assert!(record(store, elsewhere).await.inbox.is_empty());
    let missing = store
        .deliver(
            vec![delivery(
                "wf",
                "e-2",
                vec![correlated("Paid", "orderId", None)],
            )],
            at(11),
        )
        .await
        .unwrap();
    assert!(
        matches!(missing[0], Routed::Unmatched { .. }),
        "a missing value reaches nobody"
    );
}

pub(crate) async fn correlated_events_bind_the_longest_waiter<S: Store>(store: &S) {
    let oldest = create_one(store, new_instance("wf", Status::Waiting, &["Paid"]), at(0)).await;
    let middle = create_one(store, new_instance("wf", Status::Waiting, &["Paid"]), at(1)).await;
    let newest = create_one(store, new_instance("wf", Status::Waiting, &["Paid"]), at(2)).await;
    let _already = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["Paid"]),
            "orderId",
            "o-0",
        ),
        at(-5),
    )
    .await;
    let paid = |id: &str, value: &str| {
        delivery("wf", id, vec![correlated("Paid", "orderId", Some(value))])
    };
    let routed = store
        .deliver(
            vec![paid("e-1", "o-1"), paid("e-2", "o-2"), paid("e-3", "o-1")],
            at(10),
        )
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]).0, vec![oldest]);
    assert_eq!(delivered(&routed[1]).0, vec![middle]);
    assert_eq!(delivered(&routed[2]).0, vec![oldest], "now bound to o-1");
    assert_eq!(
        record(store, oldest).await.record.correlation,
        vec![("orderId".to_string(), "o-1".to_string())]
    );
    assert_eq!(
        record(store, middle).await.record.correlation,
        vec![("orderId".to_string(), "o-2".to_string())]
    );
    assert!(record(store, newest).await.record.correlation.is_empty());
}

pub(crate) async fn uncorrelated_events_reach_every_waiter<S: Store>(store: &S) {
    let first = create_one(store, new_instance("wf", Status::Waiting, &["Tick"]), at(0)).await;
    let second = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["Tick", "Other"]),
            "k",
            "v",
        ),
        at(1),
    )
    .await;
    let not_waiting = create_one(
        store,
        new_instance("wf", Status::Waiting, &["Other"]),
        at(2),
    )
    .await;
    let routed = store
        .deliver(vec![delivery("wf", "e-1", vec![target("Tick")])], at(10))
        .await
        .unwrap();
    let (instances, woken) = delivered(&routed[0]);
    assert_eq!(instances, vec![first, second]);
    assert_eq!(woken, vec![first, second]);
    assert!(record(store, not_waiting).await.inbox.is_empty());
}

pub(crate) async fn only_waiting_instances_that_wait_are_woken<S: Store>(store: &S) {
    let waiting = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["Paid"]),
            "orderId",
            "o-1",
        ),
        at(0),
    )
    .await;
    let elsewhere = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["Shipped"]),
            "orderId",
            "o-1",
        ),
        at(1),
    )
    .await;
    let runnable = create_one(
        store,
        bound(
            new_instance("wf", Status::Runnable, &["Paid"]),
            "orderId",
            "o-1",
        ),
        at(2),
    )
    .await;
    let routed = store
        .deliver(
            vec![delivery(
                "wf",
                "e-1",
                vec![correlated("Paid", "orderId", Some("o-1"))],
            )],
            at(10),
        )
        .await
        .unwrap();
    let (instances, woken) = delivered(&routed[0]);
    assert_eq!(instances, vec![waiting, elsewhere, runnable]);
    assert_eq!(woken, vec![waiting]);
    assert_eq!(
        record(store, elsewhere).await.record.status,
        Status::Waiting,
        "kept until it waits for it"
    );
}

pub(crate) async fn events_start_instances_now<S: Store>(store: &S) {
    let mut start = delivery(
        "wf",
        "e-1",
        vec![correlated("Order", "orderId", Some("o-1"))],
    );
    start.start = Some(StartPlan::Now(bound(
        new_instance("wf", Status::Runnable, &[]),
        "orderId",
        "o-1",
    )));
    let routed = store.deliver(vec![start.clone()], at(0)).await.unwrap();
    let Routed::Started { seq, instance } = routed[0] else {
        panic!("expected a start, got {routed:?}");
    };
    let started = record(store, instance).await;
    assert_eq!(seqs(&started.inbox), vec![seq]);
    assert_eq!(started.inbox[0].event, event("e-1"));
    assert_eq!(started.inbox[0].received_at, at(0));
    assert_eq!(
        started.record.correlation,
        vec![("orderId".to_string(), "o-1".to_string())]
    );
    let history = store.history(instance).await.unwrap();
    assert_eq!(history[0].kind, HistoryKind::Started);
    assert_eq!(history[0].revision, 0);
    assert_eq!(history[0].detail, json!({"input": {}}));
    // The next event with that value reaches the instance instead of starting another.
    start.event = event("e-2");
    let routed = store.deliver(vec![start], at(1)).await.unwrap();
    assert_eq!(delivered(&routed[0]).0, vec![instance]);
}

fn grouped(id: &str, this: &str, timeout: Option<Duration>) -> Delivery {
    let mut grouped = delivery("wf", id, vec![target(this)]);
    grouped.start = Some(StartPlan::Group {
        key: "o-1".to_string(),
        this: this.to_string(),
        needed: vec!["A".to_string(), "B".to_string()],
        timeout,
        instance: new_instance("wf", Status::Runnable, &[]),
    });
    grouped
}

pub(crate) async fn start_groups_complete_oldest_first<S: Store>(store: &S) {
    let routed = store
        .deliver(
            vec![
                grouped("a-1", "A", None),
                grouped("a-2", "A", None),
                grouped("b-1", "B", None),
                grouped("b-2", "B", None),
            ],
            at(0),
        )
        .await
        .unwrap();
    assert!(matches!(routed[0], Routed::Grouped { .. }));
    assert!(
        matches!(routed[1], Routed::Grouped { .. }),
        "the oldest group has an A: a new group"
    );
    let Routed::Started {
        instance: first, ..
    } = routed[2]
    else {
        panic!("b-1 completes the oldest group: {routed:?}");
    };
    let Routed::Started {
        instance: second, ..
    } = routed[3]
    else {
        panic!("b-2 completes the second group: {routed:?}");
    };
    assert_eq!(
        seqs(&record(store, first).await.inbox),
        vec![routed[0].seq(), routed[2].seq()]
    );
    assert_eq!(
        seqs(&record(store, second).await.inbox),
        vec![routed[1].seq(), routed[3].seq()]
    );
}

pub(crate) async fn start_groups_expire<S: Store>(store: &S) {
    let timeout = Some(Duration::from_secs(10));
    let routed = store
        .deliver(vec![grouped("a-1", "A", timeout)], at(0))
        .await
        .unwrap();
    assert!(
        store
            .expire_start_groups("wf", at(10))
            .await
            .unwrap()
            .is_empty(),
        "not older than 10 s yet"
    );
    // Expired but not yet removed: it does not complete.
    let late = store
        .deliver(vec![grouped("b-1", "B", timeout)], at(11))
        .await
        .unwrap();
    assert!(matches!(late[0], Routed::Grouped { .. }), "{late:?}");
    let expired = store.expire_start_groups("wf", at(12)).await.unwrap();
    assert_eq!(seqs(&expired), vec![routed[0].seq()]);
    assert_eq!(expired[0].event, event("a-1"));
    assert!(
        store
            .expire_start_groups("wf", at(13))
            .await
            .unwrap()
            .is_empty()
    );
    // The group of b-1 is alive until 21.
    let done = store
        .deliver(vec![grouped("a-2", "A", timeout)], at(20))
        .await
        .unwrap();
    let Routed::Started { instance, .. } = done[0] else {
        panic!("a-2 completes b-1's group: {done:?}");
    };
    assert_eq!(
        seqs(&record(store, instance).await.inbox),
        vec![late[0].seq(), done[0].seq()]
    );
}

pub(crate) async fn unmatched_events_keep_their_reason<S: Store>(store: &S) {
    create_one(
        store,
        new_instance("wf", Status::Waiting, &["Other"]),
        at(0),
    )
    .await;
    let routed = store
        .deliver(vec![delivery("wf", "e-1", vec![target("Paid")])], at(1))
        .await
        .unwrap();
    assert_eq!(
        routed,
        vec![Routed::Unmatched {
            seq: routed[0].seq(),
            reason: "nobody waits".to_string()
        }]
    );
    let again = store
        .deliver(vec![delivery("wf", "e-1", vec![target("Paid")])], at(2))
        .await
        .unwrap();
    assert_eq!(
        again,
        vec![Routed::Duplicate {
            seq: routed[0].seq()
        }],
        "an unmatched event is stored"
    );
}

pub(crate) async fn next_wake_follows_work_and_leases<S: Store>(store: &S) {
    assert_eq!(
        store.next_wake("wf", &Versions::Any, at(0)).await.unwrap(),
        None
    );
    create_one(store, new_instance("wf", Status::Waiting, &["A"]), at(0)).await;
    assert_eq!(
        store.next_wake("wf", &Versions::Any, at(0)).await.unwrap(),
        None,
        "only an event wakes it"
    );
    let mut timed = new_instance("wf", Status::Waiting, &[]);
    timed.wake_at = Some(at(100));
    create_one(store, timed, at(0)).await;
    assert_eq!(
        store.next_wake("wf", &Versions::Any, at(1)).await.unwrap(),
        Some(at(100))
    );
    let runnable = create_one(store, new_instance("wf", Status::Runnable, &[]), at(5)).await;
    let wake = store
        .next_wake("wf", &Versions::Any, at(6))
        .await
        .unwrap()
        .unwrap();
    assert!(wake <= at(6), "a runnable instance is due now: {wake}");
    claim_one(store, runnable, WORKER, at(7)).await;
    assert_eq!(
        store.next_wake("wf", &Versions::Any, at(8)).await.unwrap(),
        Some(at(37)),
        "its lease expires at 37"
    );
    assert_eq!(
        store
            .next_wake("other-wf", &Versions::Any, at(8))
            .await
            .unwrap(),
        None
    );
}

pub(crate) async fn outbox_is_leased_and_marked<S: Store>(store: &S) {
    let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let claimed = claim_one(store, id, WORKER, at(1)).await;
    let mut commit = step(&claimed, WORKER, Status::Runnable);
    commit.produced = vec![event("out-1"), event("out-2"), event("out-3")];
    committed(&store.commit(vec![commit], at(2)).await.unwrap()[0]);
    let first = store
        .claim_outbox("wf", WORKER, at(3), Duration::from_secs(10), 2)
        .await
        .unwrap();
    assert_eq!(
        first
            .iter()
            .map(|entry| entry.event.clone())
            .collect::<Vec<_>>(),
        vec![event("out-1"), event("out-2")]
    );
    assert!(first[0].seq < first[1].seq);
    let rest = store
        .claim_outbox("wf", OTHER, at(4), Duration::from_secs(10), 10)
        .await
        .unwrap();
    assert_eq!(rest.len(), 1, "leased entries are not claimed again");
    assert_eq!(rest[0].event, event("out-3"));
    store.mark_delivered(&[first[0].seq], at(5)).await.unwrap();
    let expired = store
        .claim_outbox("wf", OTHER, at(15), Duration::from_secs(10), 10)
        .await
        .unwrap();
    assert_eq!(
        expired.len(),
        2,
        "expired leases make them claimable, delivered ones are gone"
    );
    assert_eq!(expired[0].seq, first[1].seq);
    let all: Vec<u64> = expired.iter().map(|entry| entry.seq).collect();
    store.mark_delivered(&all, at(16)).await.unwrap();
    assert!(
        store
            .claim_outbox("wf", WORKER, at(100), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

pub(crate) async fn list_pages_newest_first<S: Store>(store: &S) {
    let mut ids = Vec::new();
    for index in 0..5 {
        let status = if index % 2 == 0 {
            Status::Runnable
        } else {
            Status::Waiting
        };
        ids.push(create_one(store, new_instance("wf", status, &[]), at(index)).await);
        create_one(
            store,
            new_instance("other-wf", Status::Runnable, &[]),
            at(index),
        )
        .await;
    }
    let page = |before: Option<InstanceId>, statuses: Vec<Status>| ListFilter {
        workflow: Some("wf".to_string()),
        statuses,
        before,
        limit: 2,
        ..ListFilter::default()
    };
    let first = store.list(&page(None, vec![])).await.unwrap();
    assert_eq!(
        first.iter().map(|summary| summary.id).collect::<Vec<_>>(),
        vec![ids[4], ids[3]]
    );
    assert_eq!(first[0].workflow, "wf");
    assert_eq!(first[0].version.as_deref(), Some("1.0"));
    assert_eq!(first[0].status, Status::Runnable);
    assert_eq!(first[0].position, "Start");
    assert_eq!(first[0].created_at, at(4));
    let second = store.list(&page(Some(ids[3]), vec![])).await.unwrap();
    assert_eq!(
        second.iter().map(|summary| summary.id).collect::<Vec<_>>(),
        vec![ids[2], ids[1]]
    );
    let waiting = store
        .list(&page(None, vec![Status::Waiting, Status::Completed]))
        .await
        .unwrap();
    assert_eq!(
        waiting.iter().map(|summary| summary.id).collect::<Vec<_>>(),
        vec![ids[3], ids[1]]
    );
    let everything = store
        .list(&ListFilter {
            limit: 100,
            ..ListFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(everything.len(), 10);
    assert!(everything.windows(2).all(|pair| pair[0].id > pair[1].id));
}

pub(crate) async fn instance_and_history<S: Store>(store: &S) {
    assert_eq!(store.instance(InstanceId::new(4242)).await.unwrap(), None);
    assert!(
        store
            .history(InstanceId::new(4242))
            .await
            .unwrap()
            .is_empty()
    );
    let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let claimed = claim_one(store, id, WORKER, at(1)).await;
    let mut first = step(&claimed, WORKER, Status::Runnable);
    first.lease_until = Some(at(40));
    first.produced = vec![event("out-1")];
    first.history.produced = vec!["urn:test out-1".to_string()];
    committed(&store.commit(vec![first], at(2)).await.unwrap()[0]);
    let mut second = step(&record(store, id).await, WORKER, Status::Failed);
    second.outcome = Some(json!({"error": "boom"}));
    second.history.kind = HistoryKind::Failed;
    second.history.from = "Next".to_string();
    second.history.to = "Next".to_string();
    committed(&store.commit(vec![second], at(3)).await.unwrap()[0]);
    let history = store.history(id).await.unwrap();
    let kinds: Vec<_> = history
        .iter()
        .map(|entry| (entry.revision, entry.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (0, HistoryKind::Started),
            (1, HistoryKind::Stepped),
            (2, HistoryKind::Failed)
        ]
    );
    assert_eq!(history[0].from, "");
    assert_eq!(history[0].to, "Start");
    assert_eq!(history[1].produced, vec!["urn:test out-1".to_string()]);
    assert_eq!(history[1].detail, json!({"worker": WORKER}));
    let failed = record(store, id).await.record;
    assert_eq!(failed.status, Status::Failed);
    assert_eq!(failed.outcome, Some(json!({"error": "boom"})));
}

/// The revisions of the history of instance `id`, oldest first.
async fn history_revisions<S: Store>(store: &S, id: InstanceId) -> Vec<u64> {
    let history = store.history(id).await.unwrap();
    history.iter().map(|entry| entry.revision).collect()
}

pub(crate) async fn a_commit_trims_the_history<S: Store>(store: &S) {
    let trimmed = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let kept = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let (mut left, mut right) = (
        claim_one(store, trimmed, WORKER, at(1)).await,
        claim_one(store, kept, WORKER, at(1)).await,
    );
    let next = |claimed: &Claimed, through: Option<u64>| {
        let mut commit = step(claimed, WORKER, Status::Runnable);
        commit.lease_until = Some(at(40));
        commit.trim_history_through = through;
        commit
    };
    for _ in 0..5 {
        // One batch, so that PostgreSQL writes both in one statement per table.
        let commits = vec![next(&left, None), next(&right, None)];
        for result in store.commit(commits, at(2)).await.unwrap() {
            committed(&result);
        }
        left = record(store, trimmed).await;
        right = record(store, kept).await;
    }
    let commits = vec![next(&left, Some(3)), next(&right, None)];
    for result in store.commit(commits, at(3)).await.unwrap() {
        committed(&result);
    }
    assert_eq!(history_revisions(store, trimmed).await, vec![0, 4, 5, 6]);
    assert_eq!(
        history_revisions(store, kept).await,
        vec![0, 1, 2, 3, 4, 5, 6],
        "an instance committed in the same batch without a trim keeps its history"
    );
    let history = store.history(trimmed).await.unwrap();
    assert_eq!(history[0].kind, HistoryKind::Started, "the input stays");

    // A trim at or past the new revision keeps the entry the commit writes.
    let left = record(store, trimmed).await;
    commit_one(store, next(&left, Some(99)), at(4)).await;
    assert_eq!(history_revisions(store, trimmed).await, vec![0, 7]);
    assert_eq!(record(store, trimmed).await.record.revision, 7);

    // Why it failed stays: the `Failed` entry (8) and the redrive (9), not the steps (7, 10).
    let mut fail = next(&record(store, trimmed).await, None);
    (fail.status, fail.history.kind) = (Status::Failed, HistoryKind::Failed);
    commit_one(store, fail, at(5)).await;
    store.redrive(trimmed, at(6)).await.unwrap();
    let claimed = claim_one(store, trimmed, WORKER, at(7)).await;
    commit_one(store, next(&claimed, None), at(8)).await;
    let left = record(store, trimmed).await;
    commit_one(store, next(&left, Some(99)), at(9)).await;
    assert_eq!(history_revisions(store, trimmed).await, vec![0, 8, 9, 11]);

    // A backlog goes at most `MAX_TRIMMED_PER_COMMIT` entries a commit, the oldest first.
    let long = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let claimed = claim_one(store, long, WORKER, at(1)).await;
    let backlog = MAX_TRIMMED_PER_COMMIT + 6;
    let at_revision = |revision: u64, through: Option<u64>| Commit {
        revision,
        ..next(&claimed, through)
    };
    let steps: Vec<Commit> = (0..backlog)
        .map(|revision| at_revision(revision, None))
        .collect();
    for result in store.commit(steps, at(2)).await.unwrap() {
        committed(&result);
    }
    commit_one(store, at_revision(backlog, Some(u64::MAX)), at(3)).await;
    let kept: Vec<u64> = std::iter::once(0)
        .chain(MAX_TRIMMED_PER_COMMIT + 1..=backlog + 1)
        .collect();
    assert_eq!(history_revisions(store, long).await, kept);
    commit_one(store, at_revision(backlog + 1, Some(u64::MAX)), at(4)).await;
    assert_eq!(
        history_revisions(store, long).await,
        vec![0, backlog + 2],
        "the next trim takes the rest"
    );
    // Two trims of one instance in one batch (PostgreSQL writes it in two rounds).
    let twice = vec![
        at_revision(backlog + 2, Some(u64::MAX)),
        at_revision(backlog + 3, Some(u64::MAX)),
    ];
    for result in store.commit(twice, at(5)).await.unwrap() {
        committed(&result);
    }
    assert_eq!(history_revisions(store, long).await, vec![0, backlog + 4]);
}

/// Commits `commit` alone, which must commit.
async fn commit_one<S: Store>(store: &S, commit: Commit, now: Timestamp) {
    committed(&store.commit(vec![commit], now).await.unwrap()[0]);
}

pub(crate) async fn cancel_ends_and_fences<S: Store>(store: &S) {
    let error = store
        .cancel(InstanceId::new(4242), "why", at(0))
        .await
        .unwrap_err();
    assert_eq!(error.kind, StoreErrorKind::NotFound);
    let id = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["A"]),
            "orderId",
            "o-1",
        ),
        at(0),
    )
    .await;
    let routed = store
        .deliver(
            vec![delivery(
                "wf",
                "e-1",
                vec![correlated("A", "orderId", Some("o-1"))],
            )],
            at(1),
        )
        .await
        .unwrap();
    let claimed = claim_one(store, id, WORKER, at(2)).await;
    let leftovers = store.cancel(id, "operator said so", at(3)).await.unwrap();
    assert_eq!(seqs(&leftovers), vec![routed[0].seq()]);
    let cancelled = record(store, id).await;
    assert_eq!(cancelled.record.status, Status::Cancelled);
    assert_eq!(cancelled.record.revision, 1);
    assert_eq!(cancelled.record.lease, None);
    assert!(cancelled.record.waits.is_empty());
    assert!(cancelled.record.correlation.is_empty());
    assert!(cancelled.inbox.is_empty());
    let results = store
        .commit(vec![step(&claimed, WORKER, Status::Completed)], at(4))
        .await
        .unwrap();
    assert!(
        matches!(results[0], CommitResult::Conflict { .. }),
        "the step in flight is fenced off"
    );
    let history = store.history(id).await.unwrap();
    assert_eq!(
        history.last().map(|entry| (entry.revision, entry.kind)),
        Some((1, HistoryKind::Cancelled))
    );
    assert!(history[1].detail.to_string().contains("operator said so"));
    let error = store.cancel(id, "again", at(5)).await.unwrap_err();
    assert_eq!(error.kind, StoreErrorKind::Ended);
}

pub(crate) async fn redrive_resumes_failed<S: Store>(store: &S) {
    let error = store
        .redrive(InstanceId::new(4242), at(0))
        .await
        .unwrap_err();
    assert_eq!(error.kind, StoreErrorKind::NotFound);
    let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let error = store.redrive(id, at(1)).await.unwrap_err();
    assert_eq!(error.kind, StoreErrorKind::NotFailed);
    let claimed = claim_one(store, id, WORKER, at(2)).await;
    let mut fail = step(&claimed, WORKER, Status::Failed);
    fail.outcome = Some(json!({"error": "boom"}));
    fail.history.kind = HistoryKind::Failed;
    committed(&store.commit(vec![fail], at(3)).await.unwrap()[0]);
    assert!(
        store
            .claim("wf", &Versions::Any, WORKER, at(4), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
    store.redrive(id, at(5)).await.unwrap();
    let redriven = record(store, id).await.record;
    assert_eq!(redriven.status, Status::Runnable);
    assert_eq!(redriven.revision, 2);
    assert_eq!(redriven.outcome, None);
    assert_eq!(
        redriven.state, r#"{"at":"next"}"#,
        "it resumes from its last committed state"
    );
    let history = store.history(id).await.unwrap();
    assert_eq!(
        history.last().map(|entry| (entry.revision, entry.kind)),
        Some((2, HistoryKind::Redriven))
    );
    assert_eq!(
        store
            .claim("wf", &Versions::Any, WORKER, at(6), LEASE, 10)
            .await
            .unwrap()
            .len(),
        1
    );
}

pub(crate) async fn events_arriving_during_a_step_are_not_lost<S: Store>(store: &S) {
    let mut timed = new_instance("wf", Status::Waiting, &["Paid"]);
    timed.wake_at = Some(at(10));
    let id = create_one(store, timed, at(0)).await;
    // Its deadline wakes it; while a worker steps it, the event it waits for arrives.
    let claimed = claim_one(store, id, WORKER, at(10)).await;
    assert!(claimed.inbox.is_empty());
    let routed = store
        .deliver(vec![delivery("wf", "e-1", vec![target("Paid")])], at(11))
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]).0, vec![id]);
    let mut commit = step(&claimed, WORKER, Status::Waiting);
    commit.waits = vec!["Paid".to_string()];
    committed(&store.commit(vec![commit], at(12)).await.unwrap()[0]);
    let after = record(store, id).await;
    assert_eq!(
        after.record.status,
        Status::Runnable,
        "the worker never saw the event"
    );
    let again = claim_one(store, id, WORKER, at(13)).await;
    assert_eq!(seqs(&again.inbox), vec![routed[0].seq()]);
    // Once a worker has seen it, waiting is honoured.
    let mut commit = step(&again, WORKER, Status::Waiting);
    commit.waits = vec!["Paid".to_string()];
    committed(&store.commit(vec![commit], at(14)).await.unwrap()[0]);
    assert_eq!(record(store, id).await.record.status, Status::Waiting);

    // A correlated event for what the step will wait for, though the instance waited for
    // nothing when it was claimed: still not lost.
    let busy = bound(new_instance("wf", Status::Runnable, &[]), "orderId", "7");
    let busy = create_one(store, busy, at(20)).await;
    let claimed = claim_one(store, busy, WORKER, at(21)).await;
    let routed = store
        .deliver(
            vec![delivery(
                "wf",
                "e-2",
                vec![correlated("Shipped", "orderId", Some("7"))],
            )],
            at(22),
        )
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]).0, vec![busy]);
    let mut commit = step(&claimed, WORKER, Status::Waiting);
    commit.waits = vec!["Shipped".to_string()];
    committed(&store.commit(vec![commit], at(23)).await.unwrap()[0]);
    assert_eq!(
        record(store, busy).await.record.status,
        Status::Runnable,
        "the step never saw the event it ended waiting for"
    );
}

pub(crate) async fn a_delivery_leases_what_it_wakes<S: Store>(store: &S) {
    let waiting = bound(
        new_instance("wf", Status::Waiting, &["Paid"]),
        "orderId",
        "o-1",
    );
    let id = create_one(store, waiting, at(0)).await;
    let routed = store
        .deliver(
            vec![claiming(
                delivery(
                    "wf",
                    "e-1",
                    vec![correlated("Paid", "orderId", Some("o-1"))],
                ),
                WORKER,
                1,
            )],
            at(10),
        )
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]), (vec![id], vec![id]));
    let claimed = claimed_by_delivery(&routed[0]);
    assert_eq!(claimed.len(), 1, "{routed:?}");
    let claimed = claimed.into_iter().next().unwrap();
    // As the store now holds it: leased, runnable, with its binding, waits and inbox.
    assert_eq!(claimed, record(store, id).await);
    assert_eq!(
        claimed.record.correlation,
        vec![("orderId".to_string(), "o-1".to_string())]
    );
    assert_eq!(claimed.record.waits, vec!["Paid".to_string()]);
    assert_eq!(
        claimed.record.lease,
        Some(Lease {
            worker: WORKER.to_string(),
            until: at(40),
        })
    );
    assert_eq!(claimed.record.status, Status::Runnable);
    assert_eq!(seqs(&claimed.inbox), vec![routed[0].seq()]);
    assert_eq!(claimed.inbox[0].event, event("e-1"));
    // Nobody else claims it while the lease lives, not even by id.
    assert!(
        store
            .claim_ids(&[id], &Versions::Any, OTHER, at(11), LEASE)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .claim("wf", &Versions::Any, OTHER, at(11), LEASE, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // The worker saw the event: a step that waits again is not made runnable.
    let mut commit = step(&claimed, WORKER, Status::Waiting);
    commit.consumed = vec![routed[0].seq()];
    commit.waits = vec!["Paid".to_string()];
    committed(&store.commit(vec![commit], at(12)).await.unwrap()[0]);
    let after = record(store, id).await;
    assert_eq!(after.record.status, Status::Waiting);
    assert!(after.inbox.is_empty());

    // An event waking several instances leases at most `limit`, lowest ids first; the rest
    // stay runnable for any worker; a limit of 0 leases none.
    let mut waiters = Vec::new();
    for second in 20..23 {
        waiters.push(
            create_one(
                store,
                new_instance("wf", Status::Waiting, &["Shipped"]),
                at(second),
            )
            .await,
        );
    }
    let routed = store
        .deliver(
            vec![claiming(
                delivery("wf", "e-2", vec![target("Shipped")]),
                WORKER,
                2,
            )],
            at(30),
        )
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]).1, waiters);
    let leased: Vec<InstanceId> = claimed_by_delivery(&routed[0])
        .iter()
        .map(|claimed| claimed.record.id)
        .collect();
    assert_eq!(leased, waiters[..2].to_vec());
    let rest = store
        .claim_ids(&waiters, &Versions::Any, OTHER, at(31), LEASE)
        .await
        .unwrap();
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].record.id, waiters[2]);
    let late = create_one(
        store,
        new_instance("wf", Status::Waiting, &["Late"]),
        at(32),
    )
    .await;
    let routed = store
        .deliver(
            vec![claiming(
                delivery("wf", "e-3", vec![target("Late")]),
                WORKER,
                0,
            )],
            at(33),
        )
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]).1, vec![late]);
    assert!(claimed_by_delivery(&routed[0]).is_empty());
    assert_eq!(record(store, late).await.record.lease, None);
}

pub(crate) async fn a_delivery_leases_no_instance_another_worker_holds<S: Store>(store: &S) {
    let mut timed = new_instance("wf", Status::Waiting, &["Paid"]);
    timed.wake_at = Some(at(10));
    let id = create_one(store, timed, at(0)).await;
    // Its deadline wakes it and another worker steps it when the event arrives.
    let held = claim_one(store, id, OTHER, at(10)).await;
    let routed = store
        .deliver(
            vec![claiming(
                delivery("wf", "e-1", vec![target("Paid")]),
                WORKER,
                1,
            )],
            at(11),
        )
        .await
        .unwrap();
    assert_eq!(delivered(&routed[0]), (vec![id], vec![id]));
    assert!(claimed_by_delivery(&routed[0]).is_empty(), "{routed:?}");
    assert_eq!(
        record(store, id)
            .await
            .record
            .lease
            .map(|lease| lease.worker),
        Some(OTHER.to_string())
    );
    // The holder never saw the event: its step that waits leaves the instance runnable.
    let mut commit = step(&held, OTHER, Status::Waiting);
    commit.waits = vec!["Paid".to_string()];
    committed(&store.commit(vec![commit], at(12)).await.unwrap()[0]);
    assert_eq!(record(store, id).await.record.status, Status::Runnable);

    // An expired lease is no obstacle.
    let mut timed = new_instance("wf", Status::Waiting, &["Paid"]);
    timed.wake_at = Some(at(20));
    let expired = create_one(store, timed, at(0)).await;
    claim_one(store, expired, OTHER, at(20)).await;
    let later = at(20 + LEASE.as_secs() as i64 + 1);
    let routed = store
        .deliver(
            vec![claiming(
                delivery("wf", "e-2", vec![target("Paid")]),
                WORKER,
                1,
            )],
            later,
        )
        .await
        .unwrap();
    let leased: Vec<InstanceId> = claimed_by_delivery(&routed[0])
        .iter()
        .map(|claimed| claimed.record.id)
        .collect();
    assert_eq!(leased, vec![expired]);
}

pub(crate) async fn two_workers_delivering_get_one_lease<S: Store>(store: &S) {
    let waiting = bound(
        new_instance("wf", Status::Waiting, &["Paid"]),
        "orderId",
        "o-1",
    );
    let id = create_one(store, waiting, at(0)).await;
    // Two hosts deliver an event for the instance at once: one of them leases it.
    let first = store.deliver(
        vec![claiming(
            delivery(
                "wf",
                "e-1",
                vec![correlated("Paid", "orderId", Some("o-1"))],
            ),
            WORKER,
            1,
        )],
        at(10),
    );
    let second = store.deliver(
        vec![claiming(
            delivery(
                "wf",
                "e-2",
                vec![correlated("Paid", "orderId", Some("o-1"))],
            ),
            OTHER,
            1,
        )],
        at(10),
    );
    let (first, second) = futures_util::future::join(first, second).await;
    let mut holders = Vec::new();
    for (routed, worker) in [(first.unwrap(), WORKER), (second.unwrap(), OTHER)] {
        assert_eq!(delivered(&routed[0]).0, vec![id]);
        for claimed in claimed_by_delivery(&routed[0]) {
            assert_eq!(claimed.record.id, id);
            holders.push((worker, claimed));
        }
    }
    assert_eq!(holders.len(), 1, "one lease: {holders:?}");
    let (worker, claimed) = holders.remove(0);
    assert_eq!(
        claimed.inbox.len(),
        1,
        "the lease came with the first event only"
    );
    let stored = record(store, id).await;
    assert_eq!(
        stored.record.lease.map(|lease| lease.worker),
        Some(worker.to_string())
    );
    // The second event reached the inbox after the lease: the holder's step that waits
    // leaves the instance runnable (the other event is still to be seen).
    assert_eq!(stored.inbox.len(), 2);
    let mut commit = step(&claimed, worker, Status::Waiting);
    commit.consumed = vec![claimed.inbox[0].seq];
    commit.waits = vec!["Paid".to_string()];
    committed(&store.commit(vec![commit], at(12)).await.unwrap()[0]);
    let after = record(store, id).await;
    assert_eq!(after.record.status, Status::Runnable);
    assert_eq!(after.inbox.len(), 1);
}

pub(crate) async fn a_batch_may_step_one_instance_twice<S: Store>(store: &S) {
    let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let claimed = claim_one(store, id, WORKER, at(1)).await;
    let mut first = step(&claimed, WORKER, Status::Runnable);
    first.lease_until = Some(at(60));
    first.produced = vec![event("out-1")];
    let mut second = step(&claimed, WORKER, Status::Waiting);
    second.revision = 1;
    second.waits = vec!["A".to_string()];
    second.produced = vec![event("out-2")];
    let stale = step(&claimed, WORKER, Status::Completed);
    let results = store
        .commit(vec![first, second, stale], at(2))
        .await
        .unwrap();
    assert_eq!(committed(&results[0]).0, 1);
    assert_eq!(
        committed(&results[1]).0,
        2,
        "the second builds on the first"
    );
    assert!(matches!(results[2], CommitResult::Conflict { .. }));
    let after = record(store, id).await.record;
    assert_eq!((after.revision, after.status), (2, Status::Waiting));
    assert_eq!(after.waits, vec!["A".to_string()]);
    let outbox = store
        .claim_outbox("wf", WORKER, at(3), LEASE, 10)
        .await
        .unwrap();
    let produced: Vec<_> = outbox.into_iter().map(|entry| entry.event).collect();
    assert_eq!(produced, vec![event("out-1"), event("out-2")]);
    let revisions: Vec<_> = store
        .history(id)
        .await
        .unwrap()
        .iter()
        .map(|entry| entry.revision)
        .collect();
    assert_eq!(revisions, vec![0, 1, 2]);
}

pub(crate) async fn one_callers_failure_is_not_anothers<S: Store>(store: &S) {
    let instances = (0..40)
        .map(|_| new_instance("wf", Status::Runnable, &[]))
        .collect();
    let ids = store.create(instances, at(0)).await.unwrap();
    let claimed = store
        .claim("wf", &Versions::Any, WORKER, at(1), LEASE, 100)
        .await
        .unwrap();
    assert_eq!(claimed.len(), ids.len());
    let broken = claimed[7].record.id;
    let mut tasks = Vec::new();
    for claimed in claimed {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let mut commit = step(&claimed, WORKER, Status::Waiting);
            commit.produced = vec![event(&format!("out-{}", claimed.record.id))];
            if claimed.record.id == broken {
                commit.children = vec![new_instance("wf", Status::Completed, &[])];
            }
            (claimed.record.id, store.commit(vec![commit], at(2)).await)
        }));
    }
    for task in tasks {
        let (id, outcome) = task.await.unwrap();
        if id == broken {
            let error = outcome.unwrap_err();
            assert_eq!(error.kind, StoreErrorKind::Invalid, "{error}");
            assert_eq!(
                record(store, id).await.record.revision,
                0,
                "nothing of it was written"
            );
        } else {
            let results = outcome.unwrap();
            assert_eq!(committed(&results[0]).0, 1, "instance {id}");
        }
    }
    let outbox = store
        .claim_outbox("wf", WORKER, at(3), LEASE, 100)
        .await
        .unwrap();
    assert_eq!(outbox.len(), ids.len() - 1);
    assert!(outbox.iter().all(|entry| entry.instance != broken));
}

/// Checks the refusal to open a database with a newer schema.
pub(crate) fn assert_newer_schema_refused<S>(opened: Result<S, StoreError>) {
    let Err(error) = opened else {
        panic!("a newer schema must be refused");
    };
    assert_eq!(error.kind, StoreErrorKind::Incompatible, "{error}");
    assert!(error.message.contains("schema version 999"), "{error}");
    assert!(error.message.contains("supports versions up to"), "{error}");
}

pub(crate) async fn a_commit_may_move_an_instance_to_another_release<S: Store>(store: &S) {
    let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
    let claimed = claim_one(store, id, WORKER, at(1)).await;
    let release = Definition {
        workflow: "wf".to_string(),
        version: Some("2".to_string()),
        hash: "h2".to_string(),
    };
    let mut commit = step(&claimed, WORKER, Status::Runnable);
    commit.definition = Some(release.clone());
    commit.lease_until = Some(at(60));
    committed(&store.commit(vec![commit], at(2)).await.unwrap()[0]);
    assert_eq!(record(store, id).await.record.definition, release);
    // Without one, the instance keeps what it runs.
    let claimed = record(store, id).await;
    committed(
        &store
            .commit(vec![step(&claimed, WORKER, Status::Waiting)], at(3))
            .await
            .unwrap()[0],
    );
    assert_eq!(record(store, id).await.record.definition, release);
}

/// `instance` as a definition of workflow `wf` with `version` started it.
fn of_version(mut instance: NewInstance, version: Option<&str>) -> NewInstance {
    instance.definition = Definition {
        workflow: "wf".to_string(),
        version: version.map(str::to_string),
        hash: format!("wf-{}", version.unwrap_or("unversioned")),
    };
    instance
}

fn only(version: Option<&str>) -> Versions {
    Versions::Only(version.map(str::to_string))
}

pub(crate) async fn a_pinned_worker_takes_only_its_version<S: Store>(store: &S) {
    let runnable = || new_instance("wf", Status::Runnable, &[]);
    let first = create_one(store, of_version(runnable(), Some("1.0")), at(0)).await;
    let second = create_one(store, of_version(runnable(), Some("2")), at(1)).await;
    let unversioned = create_one(store, of_version(runnable(), None), at(2)).await;
    // What a worker sleeps until counts only the instances it may take.
    let wake =
        |versions: Versions| async move { store.next_wake("wf", &versions, at(3)).await.unwrap() };
    assert_eq!(wake(Versions::Any).await, Some(at(0)));
    assert_eq!(wake(only(Some("2"))).await, Some(at(1)));
    assert_eq!(wake(only(None)).await, Some(at(2)), "no version is one too");
    assert_eq!(wake(only(Some("3"))).await, None);

    let ids = |claimed: Vec<Claimed>| -> Vec<InstanceId> {
        claimed.iter().map(|claimed| claimed.record.id).collect()
    };
    let claimed = store
        .claim("wf", &only(Some("2")), WORKER, at(3), LEASE, 10)
        .await
        .unwrap();
    assert_eq!(ids(claimed), vec![second]);
    let by_id = store
        .claim_ids(
            &[first, unversioned],
            &only(Some("2")),
            WORKER,
            at(3),
            LEASE,
        )
        .await
        .unwrap();
    assert!(by_id.is_empty(), "{by_id:?}");
    let by_id = store
        .claim_ids(&[first, unversioned], &only(None), WORKER, at(3), LEASE)
        .await
        .unwrap();
    assert_eq!(ids(by_id), vec![unversioned]);
    let rest = store
        .claim("wf", &Versions::Any, OTHER, at(3), LEASE, 10)
        .await
        .unwrap();
    assert_eq!(ids(rest), vec![first], "the others are leased");

    // A delivery wakes the waiters of every version, and leases only those of its own.
    let waiting = || new_instance("wf", Status::Waiting, &["Paid"]);
    let old = create_one(store, of_version(waiting(), Some("1.0")), at(4)).await;
    let new = create_one(store, of_version(waiting(), Some("2")), at(4)).await;
    let mut pinned = claiming(delivery("wf", "e-1", vec![target("Paid")]), WORKER, 10);
    if let Some(claim) = &mut pinned.claim {
        claim.versions = only(Some("2"));
    }
    let routed = store.deliver(vec![pinned], at(5)).await.unwrap();
    assert_eq!(delivered(&routed[0]), (vec![old, new], vec![old, new]));
    assert_eq!(ids(claimed_by_delivery(&routed[0])), vec![new]);
    let old_now = record(store, old).await.record;
    assert_eq!((old_now.status, old_now.lease), (Status::Runnable, None));
    let taken = store
        .claim("wf", &only(Some("1.0")), OTHER, at(6), LEASE, 10)
        .await
        .unwrap();
    assert_eq!(ids(taken), vec![old], "left for a worker of its version");

    // What is left of one version, for an operator retiring its workers.
    let listed = |versions: Versions| async move {
        let filter = ListFilter {
            workflow: Some("wf".to_string()),
            versions,
            limit: 100,
            ..ListFilter::default()
        };
        let listed = store.list(&filter).await.unwrap();
        listed.iter().map(|summary| summary.id).collect::<Vec<_>>()
    };
    assert_eq!(listed(only(Some("2"))).await, vec![new, second]);
    assert_eq!(listed(only(Some("1.0"))).await, vec![old, first]);
    assert_eq!(listed(only(None)).await, vec![unversioned]);
    assert_eq!(listed(Versions::Any).await.len(), 5);
}

pub(crate) async fn each_workflow_claims_its_own_outbox<S: Store>(store: &S) {
    let mut produced_by = Vec::new();
    for (workflow, out) in [
        ("wf", "out-wf"),
        ("other-wf", "out-other"),
        ("wf", "out-wf-2"),
    ] {
        let id = create_one(store, new_instance(workflow, Status::Runnable, &[]), at(0)).await;
        let claimed = claim_one(store, id, WORKER, at(1)).await;
        let mut commit = step(&claimed, WORKER, Status::Runnable);
        commit.produced = vec![event(out)];
        committed(&store.commit(vec![commit], at(2)).await.unwrap()[0]);
        produced_by.push(id);
    }
    let claim = |workflow: &'static str| async move {
        store
            .claim_outbox(workflow, WORKER, at(3), LEASE, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|entry| (entry.instance, entry.event))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        claim("other-wf").await,
        vec![(produced_by[1], event("out-other"))],
        "another workflow's events are not its to send"
    );
    assert_eq!(
        claim("wf").await,
        vec![
            (produced_by[0], event("out-wf")),
            (produced_by[2], event("out-wf-2"))
        ]
    );
    assert!(claim("never-seen").await.is_empty());
}

/// Steps `id` (claimed at `now`) to `status` at `now`, producing `produced`.
async fn end_at<S: Store>(
    store: &S,
    id: InstanceId,
    status: Status,
    produced: Vec<Event>,
    now: Timestamp,
) {
    let claimed = claim_one(store, id, WORKER, now).await;
    let mut commit = step(&claimed, WORKER, status);
    commit.produced = produced;
    committed(&store.commit(vec![commit], now).await.unwrap()[0]);
}

fn purging(workflow: Option<&str>, before: Timestamp, limit: usize) -> PurgeFilter {
    PurgeFilter {
        workflow: workflow.map(str::to_string),
        before,
        limit,
    }
}

async fn exists<S: Store>(store: &S, id: InstanceId) -> bool {
    store.instance(id).await.unwrap().is_some()
}

pub(crate) async fn purge_removes_what_ended_and_what_nothing_holds<S: Store>(store: &S) {
    let runnable = new_instance("wf", Status::Runnable, &[]);
    let completed = create_one(store, keyed("wf", "order-1", "{}"), at(0)).await;
    end_at(store, completed, Status::Completed, Vec::new(), at(10)).await;
    let failed = create_one(store, runnable.clone(), at(0)).await;
    end_at(store, failed, Status::Failed, Vec::new(), at(10)).await;
    let cancelled = create_one(store, runnable.clone(), at(0)).await;
    store.cancel(cancelled, "why", at(10)).await.unwrap();
    let sending = create_one(store, runnable.clone(), at(0)).await;
    end_at(
        store,
        sending,
        Status::Completed,
        vec![event("out-1")],
        at(10),
    )
    .await;
    let recent = create_one(store, runnable.clone(), at(0)).await;
    end_at(store, recent, Status::Completed, Vec::new(), at(50)).await;
    let old_but_running = create_one(store, runnable.clone(), at(0)).await;
    let waiting = create_one(store, new_instance("wf", Status::Waiting, &["A"]), at(0)).await;
    let elsewhere = create_one(store, new_instance("other", Status::Runnable, &[]), at(0)).await;
    end_at(store, elsewhere, Status::Completed, Vec::new(), at(10)).await;
    let held = store
        .deliver(vec![delivery("wf", "held", vec![target("A")])], at(5))
        .await
        .unwrap();
    assert_eq!(delivered(&held[0]).0, vec![waiting]);
    let unheld = store
        .deliver(vec![delivery("wf", "unheld", vec![])], at(5))
        .await
        .unwrap();
    let late = store
        .deliver(vec![delivery("wf", "late", vec![])], at(40))
        .await
        .unwrap();
    // Nobody waits for `B`: the event starts a group that waits for an `A`.
    let in_group = store
        .deliver(vec![grouped("in-group", "B", None)], at(5))
        .await
        .unwrap();
    assert!(
        matches!(in_group[0], Routed::Grouped { .. }),
        "{in_group:?}"
    );

    let purged = store
        .purge(&purging(Some("wf"), at(30), 100))
        .await
        .unwrap();
    assert_eq!(
        purged,
        Purged {
            instances: 3,
            events: 1
        }
    );
    for gone in [completed, failed, cancelled] {
        assert!(!exists(store, gone).await, "instance {gone} ended at 10");
        assert!(store.history(gone).await.unwrap().is_empty());
    }
    for kept in [sending, recent, old_but_running, waiting, elsewhere] {
        assert!(exists(store, kept).await, "instance {kept} is kept");
    }
    assert_eq!(
        seqs(&record(store, waiting).await.inbox),
        vec![held[0].seq()],
        "an event an inbox holds stays"
    );
    let again = store
        .deliver(
            vec![
                delivery("wf", "held", vec![]),
                delivery("wf", "unheld", vec![]),
                delivery("wf", "late", vec![]),
            ],
            at(60),
        )
        .await
        .unwrap();
    assert_eq!(again[0], Routed::Duplicate { seq: held[0].seq() });
    assert!(
        matches!(again[1], Routed::Unmatched { seq, .. } if seq > unheld[0].seq()),
        "a purged event is new again: {:?}",
        again[1]
    );
    assert_eq!(again[2], Routed::Duplicate { seq: late[0].seq() });
    let regrouped = store
        .deliver(vec![grouped("in-group", "B", None)], at(60))
        .await
        .unwrap();
    assert_eq!(
        regrouped[0],
        Routed::Duplicate {
            seq: in_group[0].seq()
        },
        "an event a start group holds stays"
    );
    let key_again = create_one(store, keyed("wf", "order-1", "{}"), at(60)).await;
    assert!(
        key_again > completed,
        "a purged instance's start key is free"
    );
    let mut given = new_instance("wf", Status::Runnable, &[]);
    given.inbox = vec![unheld[0].seq(), late[0].seq()];
    let given = create_one(store, given, at(60)).await;
    assert_eq!(
        seqs(&record(store, given).await.inbox),
        vec![late[0].seq()],
        "a purged event given to a new instance is left out"
    );
    let leftovers = store.cancel(given, "why", at(60)).await.unwrap();
    assert_eq!(seqs(&leftovers), vec![late[0].seq()]);

    // Once its produced event is delivered, the instance that was sending goes too; every
    // workflow's when none is named.
    let outbox = store
        .claim_outbox("wf", WORKER, at(61), LEASE, 10)
        .await
        .unwrap();
    assert_eq!(outbox.len(), 1);
    store
        .mark_delivered(&[outbox[0].seq], at(62))
        .await
        .unwrap();
    let purged = store.purge(&purging(None, at(30), 100)).await.unwrap();
    assert_eq!(purged.instances, 2, "{purged:?}");
    assert!(!exists(store, sending).await);
    assert!(!exists(store, elsewhere).await);
    assert!(exists(store, recent).await);
    assert_eq!(
        store.purge(&purging(None, at(30), 100)).await.unwrap(),
        Purged::default(),
        "nothing is left to remove"
    );
    let unknown = store
        .purge(&purging(Some("wf-typo"), at(30), 100))
        .await
        .unwrap_err();
    assert_eq!(unknown.kind, StoreErrorKind::NotFound);
    assert!(unknown.message.contains("`wf-typo`"), "{unknown}");
}

pub(crate) async fn purge_goes_in_rounds_oldest_first<S: Store>(store: &S) {
    let mut ended = Vec::new();
    for seconds in [3, 1, 2] {
        let id = create_one(store, new_instance("wf", Status::Runnable, &[]), at(0)).await;
        end_at(store, id, Status::Completed, Vec::new(), at(seconds)).await;
        ended.push(id);
    }
    for id in ["e-1", "e-2", "e-3"] {
        store
            .deliver(vec![delivery("wf", id, vec![])], at(1))
            .await
            .unwrap();
    }
    let first = store.purge(&purging(None, at(10), 2)).await.unwrap();
    assert_eq!(
        first,
        Purged {
            instances: 2,
            events: 2
        }
    );
    assert!(first.may_have_more(2));
    assert!(exists(store, ended[0]).await, "the latest to end goes last");
    let second = store.purge(&purging(None, at(10), 2)).await.unwrap();
    assert_eq!(
        second,
        Purged {
            instances: 1,
            events: 1
        }
    );
    assert!(!second.may_have_more(2));
    assert!(!exists(store, ended[0]).await);
}

/// A failed step is not committed: a redrive runs it again, and it must find the events it
/// took and early ones, and still own the values it is bound to. Completing lets go of both.
/// A failed instance keeps its bindings, so the events of its values reach it and start
/// nothing: an operator who gives up on it cancels it, and they reach others again.
pub(crate) async fn a_failed_instance_may_be_cancelled<S: Store>(store: &S) {
    let id = create_one(
        store,
        bound(new_instance("wf", Status::Runnable, &[]), "orderId", "o-1"),
        at(0),
    )
    .await;
    let claimed = claim_one(store, id, WORKER, at(1)).await;
    let mut fail = step(&claimed, WORKER, Status::Failed);
    fail.history.kind = HistoryKind::Failed;
    committed(&store.commit(vec![fail], at(2)).await.unwrap()[0]);
    let for_o1 = |event: &str| delivery("wf", event, vec![correlated("A", "orderId", Some("o-1"))]);
    let held = store.deliver(vec![for_o1("e-1")], at(3)).await.unwrap();
    assert_eq!(delivered(&held[0]), (vec![id], Vec::new()));

    let left = store.cancel(id, "gave up", at(4)).await.unwrap();
    assert_eq!(seqs(&left), vec![held[0].seq()], "what it kept is given up");
    let cancelled = record(store, id).await;
    assert_eq!(cancelled.record.status, Status::Cancelled);
    assert!(cancelled.record.correlation.is_empty());
    assert!(cancelled.inbox.is_empty());
    let after = store.deliver(vec![for_o1("e-2")], at(5)).await.unwrap();
    assert!(
        matches!(after[0], Routed::Unmatched { .. }),
        "no longer bound: {after:?}"
    );
    let again = store.cancel(id, "twice", at(6)).await.unwrap_err();
    assert_eq!(again.kind, StoreErrorKind::Ended);
}

pub(crate) async fn a_failed_instance_keeps_its_inbox_and_bindings_for_a_redrive<S: Store>(
    store: &S,
) {
    let id = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["A"]),
            "orderId",
            "o-1",
        ),
        at(0),
    )
    .await;
    let for_o1 = |event: &str, definition: &str| {
        delivery(
            "wf",
            event,
            vec![correlated(definition, "orderId", Some("o-1"))],
        )
    };
    let early = store
        .deliver(vec![for_o1("e-1", "A"), for_o1("e-2", "B")], at(1))
        .await
        .unwrap();
    let taken = early[0].seq();
    let claimed = claim_one(store, id, WORKER, at(2)).await;
    assert_eq!(seqs(&claimed.inbox), vec![taken, early[1].seq()]);
    let mut fail = step(&claimed, WORKER, Status::Failed);
    fail.state = claimed.record.state.clone();
    fail.consumed = vec![taken];
    fail.waits = vec!["A".to_string()];
    fail.outcome = Some(json!({"error": "boom"}));
    fail.history.kind = HistoryKind::Failed;
    let (_, _, leftovers) = committed(&store.commit(vec![fail], at(3)).await.unwrap()[0]);
    assert!(leftovers.is_empty(), "nothing is given up: {leftovers:?}");
    let failed = record(store, id).await;
    assert_eq!(failed.record.status, Status::Failed);
    assert_eq!(
        seqs(&failed.inbox),
        vec![taken, early[1].seq()],
        "the event the failed step took stays"
    );
    assert_eq!(
        failed.record.correlation,
        vec![("orderId".to_string(), "o-1".to_string())]
    );
    assert!(failed.record.waits.is_empty(), "nothing wakes it");
    assert_eq!(failed.record.lease, None);
    assert_eq!(
        store.next_wake("wf", &Versions::Any, at(4)).await.unwrap(),
        None
    );

    // Its values still route to it (into its inbox, not waking it), not to an instance that
    // waits unbound: after a redrive it may wait for them.
    let unbound = create_one(store, new_instance("wf", Status::Waiting, &["A"]), at(4)).await;
    let meanwhile = store
        .deliver(vec![for_o1("e-3", "A")], at(5))
        .await
        .unwrap();
    assert_eq!(delivered(&meanwhile[0]), (vec![id], Vec::new()));
    assert_eq!(record(store, id).await.record.status, Status::Failed);
    assert!(record(store, unbound).await.inbox.is_empty());
    assert!(
        store
            .claim("wf", &Versions::Any, WORKER, at(6), LEASE, 10)
            .await
            .unwrap()
            .is_empty(),
        "a failed instance is not claimed"
    );

    store.redrive(id, at(7)).await.unwrap();
    let claimed = claim_one(store, id, WORKER, at(8)).await;
    assert_eq!(claimed.record.status, Status::Runnable);
    assert_eq!(
        seqs(&claimed.inbox),
        vec![taken, early[1].seq(), meanwhile[0].seq()]
    );
    assert_eq!(
        claimed.record.correlation,
        vec![("orderId".to_string(), "o-1".to_string())]
    );
    let mut complete = step(&claimed, WORKER, Status::Completed);
    complete.consumed = vec![taken];
    complete.outcome = Some(json!({"done": true}));
    complete.history.kind = HistoryKind::Completed;
    let (_, _, leftovers) = committed(&store.commit(vec![complete], at(9)).await.unwrap()[0]);
    assert_eq!(
        seqs(&leftovers),
        vec![early[1].seq(), meanwhile[0].seq()],
        "completing gives up what it never took"
    );
    let completed = record(store, id).await;
    assert!(completed.inbox.is_empty());
    assert!(completed.record.correlation.is_empty());
    let after = store
        .deliver(vec![for_o1("e-4", "A")], at(10))
        .await
        .unwrap();
    assert_eq!(
        delivered(&after[0]).0,
        vec![unbound],
        "its value is free: the longest waiter binds it"
    );
}

/// Purging a failed instance removes the inbox and bindings it kept; until then its inbox
/// holds its events.
pub(crate) async fn a_purge_removes_a_failed_instances_inbox_and_bindings<S: Store>(store: &S) {
    let id = create_one(
        store,
        bound(
            new_instance("wf", Status::Waiting, &["A"]),
            "orderId",
            "o-1",
        ),
        at(0),
    )
    .await;
    let paid = |event: &str| delivery("wf", event, vec![correlated("A", "orderId", Some("o-1"))]);
    let held = store.deliver(vec![paid("e-1")], at(1)).await.unwrap();
    end_at(store, id, Status::Failed, Vec::new(), at(10)).await;
    assert_eq!(seqs(&record(store, id).await.inbox), vec![held[0].seq()]);

    // Received before the purge's instant, but held by the inbox of an instance that stays.
    let purged = store.purge(&purging(None, at(5), 100)).await.unwrap();
    assert_eq!(purged, Purged::default());
    assert_eq!(
        store.deliver(vec![paid("e-1")], at(20)).await.unwrap()[0],
        Routed::Duplicate { seq: held[0].seq() },
        "an event a failed instance's inbox holds stays"
    );

    let purged = store.purge(&purging(None, at(30), 100)).await.unwrap();
    assert_eq!(
        purged,
        Purged {
            instances: 1,
            events: 1
        }
    );
    assert!(!exists(store, id).await);
    let waiting = create_one(store, new_instance("wf", Status::Waiting, &["A"]), at(40)).await;
    let routed = store.deliver(vec![paid("e-1")], at(41)).await.unwrap();
    assert!(
        routed[0].seq() > held[0].seq(),
        "its inbox went with it, and then its event: {routed:?}"
    );
    assert_eq!(
        delivered(&routed[0]).0,
        vec![waiting],
        "its binding went with it"
    );
}

/// A cancelled instance's outcome is the reason it was cancelled for: it says how it ended.
pub(crate) async fn a_cancelled_instance_keeps_its_reason<S: Store>(store: &S) {
    let id = create_one(store, new_instance("wf", Status::Waiting, &["A"]), at(0)).await;
    store.cancel(id, "customer left", at(1)).await.unwrap();
    let cancelled = record(store, id).await.record;
    assert_eq!(cancelled.status, Status::Cancelled);
    assert_eq!(cancelled.outcome, Some(json!({"reason": "customer left"})));
}
