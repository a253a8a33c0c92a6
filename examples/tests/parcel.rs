//! The README's first command: the parcel example, killed with SIGKILL while it packs and run
//! again, resumes at `Pack`, keeps the deadline it had, charges the card once, and completes.
#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

fn parcel(db: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_parcel"));
    command
        .arg(db)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    command
}

#[test]
fn killed_while_packing_it_resumes_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("parcel.db");

    let mut first = parcel(&db).spawn().unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(first.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let packing = line.contains("at `Pack`, waiting until");
        seen.push(line);
        if packing {
            break;
        }
    }
    first.kill().unwrap(); // SIGKILL: nothing is let go of cleanly
    first.wait().unwrap();
    assert!(seen[0].starts_with("started parcel 1"), "{seen:#?}");
    let until = seen.last().unwrap().clone();

    let second = parcel(&db).output().unwrap();
    assert!(second.status.success());
    let out = String::from_utf8(second.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("resuming parcel 1") && lines[0].contains("at `Pack`"),
        "{out}"
    );
    assert_eq!(lines[1], until, "the delay keeps its deadline");
    assert!(!out.contains("charge 40"), "charged again: {out}");
    assert!(out.contains("ship \"BOOK-7\""), "{out}");
    assert!(out.contains("completed: {"), "{out}");
    let payments = std::fs::read_to_string(db.with_extension("payments")).unwrap();
    assert_eq!(payments.lines().count(), 1, "one charge: {payments}");
}
