//! `swf`, run as users run it, on a SQLite store seeded through the `Store` API: list, show,
//! cancel, redrive, purge, and the errors they give.
#![cfg(feature = "cli")]

use std::process::Command;
use std::time::Duration;

use swf_runtime::store::sqlite::SqliteStore;
use swf_runtime::store::{
    Commit, Definition, Delivery, HistoryEntry, HistoryKind, NewInstance, Status, Store, Versions,
};
use swf_runtime::{InstanceId, Timestamp, json};

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + seconds).unwrap()
}

fn instance(position: &str) -> NewInstance {
    NewInstance {
        definition: Definition {
            workflow: "order".into(),
            version: Some("1.0".into()),
            hash: "abc".into(),
        },
        state: format!(r#"{{"{position}":{{"data":{{"orderId":7}}}}}}"#),
        position: position.into(),
        status: Status::Waiting,
        wake_at: Some(at(3600)),
        waits: vec!["Shipped".into()],
        correlation: vec![("orderid".into(), "7".into())],
        inbox: Vec::new(),
        parent: None,
        lease: None,
        detail: json!({"input": {"orderId": 7}}),
        start_key: None,
    }
}

/// A store with instance 1 waiting at `Pack` (started with the key `order-7`), and instance 2
/// failed at `Charge`.
async fn seeded(path: &std::path::Path) -> (InstanceId, InstanceId) {
    let store = SqliteStore::open(path).await.unwrap();
    let mut keyed = instance("Pack");
    keyed.start_key = Some("order-7".into());
    let ids = store
        .create(vec![keyed, instance("Charge")], at(0))
        .await
        .unwrap();
    let failing = ids[1];
    // Instance 2: claimed as it is due, and failed.
    end(
        &store,
        failing,
        at(3700),
        (Status::Failed, HistoryKind::Failed),
        json!({"workflow": "order", "task": "Charge", "error": {"name": "CardDeclined", "message": "no", "trace": ""}, "data": {}}),
    )
    .await;
    (ids[0], failing)
}

fn swf(store: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_swf"))
        .arg("--store")
        .arg(format!("sqlite:{}", store.display()))
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_shows_cancels_and_redrives() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swf.db");
    let (waiting, failed) = seeded(&path).await;

    let (code, out, _) = swf(&path, &["list"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[1].contains("failed") && lines[1].contains("order 1.0"),
        "{out}"
    );
    assert!(
        lines[2].contains("waiting") && lines[2].ends_with("Pack"),
        "{out}"
    );

    let (code, out, _) = swf(&path, &["list", "--workflow-version", "1.0"]);
    assert_eq!((code, out.lines().count()), (0, 3), "{out}");
    let (code, out, _) = swf(&path, &["list", "--workflow-version", "2.0"]);
    assert_eq!((code, out.as_str()), (0, "no instances\n"));

    let (code, out, _) = swf(&path, &["list", "--status", "failed", "--json"]);
    assert_eq!(code, 0);
    let listed: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(listed["id"], json!(failed.get()));

    let (code, out, _) = swf(&path, &["show", &waiting.to_string()]);
    assert_eq!(code, 0);
    assert!(out.contains("status       waiting"), "{out}");
    assert!(
        out.contains("waits for    Shipped until 2027-01-15T09:00:00Z"),
        "{out}"
    );
    assert!(out.contains("correlation  orderid=7"), "{out}");
    assert!(out.contains(r#"start key    "order-7""#), "{out}");
    assert!(out.contains(r#""orderId": 7"#), "{out}");
    assert!(out.contains("started"), "{out}");

    let (code, out, _) = swf(&path, &["redrive", &failed.to_string()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("runnable again at `Charge`"), "{out}");
    let (_, out, _) = swf(&path, &["show", &failed.to_string(), "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(shown["status"], json!("runnable"));
    assert_eq!(shown["start_key"], json!(null));
    let kinds: Vec<&str> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["started", "failed", "redriven"]);

    let (code, out, _) = swf(
        &path,
        &["cancel", &waiting.to_string(), "--reason", "customer left"],
    );
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("cancelled instance {waiting}")),
        "{out}"
    );
    let (_, out, _) = swf(&path, &["show", &waiting.to_string()]);
    assert!(out.contains("status       cancelled"), "{out}");
    assert!(
        out.contains(r#"outcome      {"reason":"customer left"}"#),
        "{out}"
    );
    let (code, _, err) = swf(&path, &["cancel", &waiting.to_string()]);
    assert_eq!(code, 1);
    assert!(err.contains("error:"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swf.db");
    seeded(&path).await;
    let (code, _, err) = swf(&path, &["show", "999"]);
    assert_eq!(code, 1);
    assert!(err.contains("there is no instance 999"), "{err}");
    let (code, _, err) = swf(&path, &["redrive", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("error:"), "{err}");
    let (code, _, err) = swf(&path, &["list", "--status", "sleeping"]);
    assert_eq!(code, 2);
    assert!(err.contains("`sleeping` is not a status"), "{err}");
    let output = Command::new(env!("CARGO_BIN_EXE_swf"))
        .args(["--store", "mysql://nowhere", "list"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a store URL"));
}

/// Claims instance `id` at `now` and commits its end there, where it stands: `status` with
/// its history entry's `kind`, and `outcome`.
async fn end(
    store: &SqliteStore,
    id: InstanceId,
    now: Timestamp,
    (status, kind): (Status, HistoryKind),
    outcome: serde_json::Value,
) {
    let ending = stay(store, id, now, (status, kind), None).await;
    store
        .commit(
            vec![Commit {
                outcome: Some(outcome),
                ..ending
            }],
            now,
        )
        .await
        .unwrap();
}

/// A commit of instance `id`, claimed at `now`, that leaves it where it stands: `status`
/// with its history entry's `kind`, the history trimmed `through` that revision.
async fn stay(
    store: &SqliteStore,
    id: InstanceId,
    now: Timestamp,
    (status, kind): (Status, HistoryKind),
    through: Option<u64>,
) -> Commit {
    let claimed = store
        .claim_ids(&[id], &Versions::Any, "w", now, Duration::from_secs(30))
        .await
        .unwrap();
    let record = &claimed[0].record;
    Commit {
        instance: id,
        worker: "w".into(),
        revision: record.revision,
        state: record.state.clone(),
        definition: None,
        position: record.position.clone(),
        status,
        wake_at: None,
        waits: Vec::new(),
        bind: Vec::new(),
        consumed: Vec::new(),
        produced: Vec::new(),
        children: Vec::new(),
        outcome: None,
        lease_until: None,
        trim_history_through: through,
        history: HistoryEntry {
            revision: 0,
            at: now,
            kind,
            from: record.position.clone(),
            to: record.position.clone(),
            consumed: Vec::new(),
            produced: Vec::new(),
            detail: json!({"task": record.position}),
        },
    }
}

/// Instance `id`, completed at `now`.
async fn complete(store: &SqliteStore, id: InstanceId, now: Timestamp) {
    let completed = (Status::Completed, HistoryKind::Completed);
    end(store, id, now, completed, json!({"paid": 70})).await;
}

fn hours_ago(hours: i64) -> Timestamp {
    Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_hours(hours))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purges_what_ended_long_ago() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swf.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let mut runnable = instance("Charge");
    runnable.status = Status::Runnable;
    runnable.wake_at = None;
    let ids = store
        .create(
            vec![runnable.clone(), runnable.clone(), runnable],
            hours_ago(80),
        )
        .await
        .unwrap();
    complete(&store, ids[0], hours_ago(72)).await;
    complete(&store, ids[1], hours_ago(1)).await;
    let mut stray = cloudevents::Event::default();
    cloudevents::event::AttributesWriter::set_id(&mut stray, "stray-1");
    store
        .deliver(
            vec![Delivery {
                workflow: "order".into(),
                event: stray,
                targets: Vec::new(),
                start: None,
                unmatched: "nobody waits".into(),
                claim: None,
            }],
            hours_ago(72),
        )
        .await
        .unwrap();
    drop(store);

    let (code, out, err) = swf(&path, &["purge", "--older-than", "2d"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("purged 1 instance(s) that ended before ")
            && out.contains(" and 1 event(s)"),
        "{out}"
    );
    let (code, _, err) = swf(&path, &["show", &ids[0].to_string()]);
    assert_eq!(code, 1);
    assert!(err.contains("there is no instance"), "{err}");
    for kept in [ids[1], ids[2]] {
        let (code, _, err) = swf(&path, &["show", &kept.to_string()]);
        assert_eq!(code, 0, "instance {kept}: {err}");
    }
    let (code, out, _) = swf(&path, &["purge", "--older-than", "30m", "--json"]);
    assert_eq!(code, 0);
    let purged: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (purged["instances"].clone(), purged["events"].clone()),
        (json!(1), json!(0))
    );
    let (code, _, err) = swf(
        &path,
        &["purge", "--older-than", "1d", "--workflow", "ordre"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("there is no workflow `ordre`"), "{err}");
    let (code, _, err) = swf(&path, &["purge", "--older-than", "30s"]);
    assert_eq!(code, 2);
    assert!(err.contains("under a minute"), "{err}");
    let (code, _, err) = swf(&path, &["purge", "--older-than", "1mo"]);
    assert_eq!(code, 2);
    assert!(err.contains("`1mo` is not an age"), "{err}");
    let (code, _, err) = swf(&path, &["purge", "--older-than", "1d", "--batch", "0"]);
    assert_eq!(code, 2, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_what_a_history_limit_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swf.db");
    let (waiting, _) = seeded(&path).await;
    let store = SqliteStore::open(&path).await.unwrap();
    let stepped = (Status::Runnable, HistoryKind::Stepped);
    for (seconds, through) in [(3700, None), (3701, None), (3702, None), (3703, Some(3))] {
        let commit = stay(&store, waiting, at(seconds), stepped, through).await;
        store.commit(vec![commit], at(seconds)).await.unwrap();
    }
    drop(store);

    let (code, out, _) = swf(&path, &["show", &waiting.to_string()]);
    assert_eq!(code, 0);
    let history: Vec<&str> = out
        .lines()
        .skip_while(|line| *line != "history")
        .skip(1)
        .collect();
    assert_eq!(history.len(), 3, "{out}");
    assert!(history[0].contains("started"), "{out}");
    assert_eq!(
        history[1], "  ...   3 entries dropped (history limit)",
        "{out}"
    );
    assert!(history[2].trim_start().starts_with("4 "), "{out}");
}

/// `swf list --json | head -1`: the reader goes before the listing is written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_that_stops_early_is_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swf.db");
    let store = SqliteStore::open(&path).await.unwrap();
    // Well over a pipe's 64 KiB of JSON lines, so that the writer meets the closed pipe.
    let instances = (0..1_000).map(|_| instance("Pack")).collect();
    store.create(instances, at(0)).await.unwrap();
    drop(store);
    let mut child = Command::new(env!("CARGO_BIN_EXE_swf"))
        .args([
            "--store",
            path.to_str().unwrap(),
            "--json",
            "list",
            "--limit",
            "1000",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// The names in `directory`, sorted.
fn entries(directory: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `swf list` where no store is (the default `swf.db` in another directory, a mistyped path)
/// once created an empty store there and answered "no instances".
#[test]
fn a_store_that_is_not_there_is_an_error_and_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_swf"))
        .env_remove("SWF_STORE")
        .current_dir(dir.path())
        .arg("list")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("there is no store at swf.db"), "{stderr}");
    assert!(stderr.contains("DurableHost creates the store"), "{stderr}");
    assert!(output.stdout.is_empty());

    let mistyped = dir.path().join("prod.db");
    for args in [
        &["list"][..],
        &["show", "1"],
        &["purge", "--older-than", "30d"],
    ] {
        let (code, out, err) = swf(&mistyped, args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
        assert!(
            err.contains(&format!("there is no store at {}", mistyped.display())),
            "{err}"
        );
    }
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

/// `swf --store other-app.db list` once gave another application's SQLite file the store's
/// tables and switched it to WAL.
#[test]
fn another_applications_database_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other-app.db");
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('kept');")
        .unwrap();
    drop(connection);
    let before = std::fs::read(&path).unwrap();

    let (code, out, err) = swf(&path, &["list"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    for part in [
        &*path.display().to_string(),
        "holds no swf store",
        "swf_schema_version",
        "left as it was",
    ] {
        assert!(err.contains(part), "`{part}` in: {err}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
    assert_eq!(entries(dir.path()), ["other-app.db"], "no log beside it");
}

/// A store a host of this build created opens; one of an older schema (which `swf` once
/// migrated) or a newer one is refused and left as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_store_of_this_builds_schema_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swf.db");
    drop(SqliteStore::open(&path).await.unwrap());
    let (code, out, err) = swf(&path, &["list"]);
    assert_eq!((code, out.as_str()), (0, "no instances\n"), "{err}");

    let version = |path: &std::path::Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row("SELECT max(version) FROM swf_schema_version", [], |row| {
                row.get(0)
            })
            .unwrap()
    };
    let current = version(&path);
    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute(
            "DELETE FROM swf_schema_version WHERE version = ?1",
            [current],
        )
        .unwrap();
    drop(connection);
    let (code, _, err) = swf(&path, &["list"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!("schema version {}, older", current - 1)),
        "{err}"
    );
    assert!(err.contains("start a DurableHost of this build"), "{err}");
    assert_eq!(version(&path), current - 1, "migrated by swf");

    let connection = rusqlite::Connection::open(&path).unwrap();
    connection
        .execute_batch(
            "INSERT INTO swf_schema_version (version, applied_at) VALUES (998, 0), (999, 0)",
        )
        .unwrap();
    drop(connection);
    let (code, _, err) = swf(&path, &["list"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("schema version 999"), "{err}");
    assert!(err.contains("use a newer swf"), "{err}");
}

/// The PostgreSQL test server (as the store's own tests use it).
const POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";

/// A client of the test server, or `None` (the test is skipped) when it cannot be reached
/// outside CI.
async fn postgres() -> Option<tokio_postgres::Client> {
    match tokio_postgres::connect(POSTGRES, tokio_postgres::NoTls).await {
        Ok((client, connection)) => {
            tokio::spawn(connection);
            Some(client)
        }
        Err(error) => {
            let why = format!("PostgreSQL at {POSTGRES} cannot be reached: {error}");
            if std::env::var("CI").is_ok_and(|ci| ci == "true") {
                panic!("{why} (CI=true: the PostgreSQL tests must run)");
            }
            eprintln!("skipping a PostgreSQL test: {why}");
            None
        }
    }
}

/// `swf` on a mistyped PostgreSQL URL once created the store's tables in whatever database
/// (and schema) it named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_database_without_a_store_is_refused_and_left_as_it_was() {
    let Some(client) = postgres().await else {
        return;
    };
    let schema = format!("swf_cli_{}", std::process::id());
    client
        .batch_execute(&format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
        ))
        .await
        .unwrap();
    let url = format!("{POSTGRES}?options=-csearch_path%3D{schema}");
    let list = || {
        Command::new(env!("CARGO_BIN_EXE_swf"))
            .args(["--store", &url, "list"])
            .output()
            .unwrap()
    };
    let refused = list();
    let tables: i64 = client
        .query_one(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
            &[&schema],
        )
        .await
        .unwrap()
        .get(0);
    // Once a host created the store there, swf opens it.
    let store = swf_runtime::store::postgres::PostgresStore::open(&url).await;
    let listed = store.is_ok().then(list);
    drop(store);
    client
        .batch_execute(&format!("DROP SCHEMA {schema} CASCADE"))
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("holds no swf store"), "{stderr}");
    assert!(stderr.contains(&schema), "{stderr}");
    assert_eq!(tables, 0, "tables created in {schema}");
    let listed = listed.expect("the store opens");
    assert_eq!(
        (
            listed.status.code(),
            &*String::from_utf8_lossy(&listed.stdout)
        ),
        (Some(0), "no instances\n"),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
}

/// `swf list --limit 5000` once listed 1000 instances (the stores' cap) and said nothing: a
/// page shorter than asked for looked like the last one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_above_a_page_is_refused_with_how_to_page() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swf.db");
    seeded(&path).await;
    let (code, out, err) = swf(&path, &["list", "--limit", "1001"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    for part in ["`1001`", "at most 1000", "--before ID"] {
        assert!(err.contains(part), "`{part}` in: {err}");
    }
    let (code, out, err) = swf(&path, &["list", "--limit", "1000"]);
    assert_eq!((code, out.lines().count()), (0, 3), "{out}{err}");
    let (code, _, err) = swf(&path, &["list", "--limit", "many"]);
    assert_eq!(code, 2, "{err}");
}
