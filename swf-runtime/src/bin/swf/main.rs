//! `swf`: operates the workflow instances of a store (SQLite file or PostgreSQL database):
//! lists them, shows one with its history, cancels one, resumes a failed one from its last
//! committed state once the fault is fixed, and purges what ended long ago.
//!
//! It opens only an existing store of this build's schema (`AnyStore::open_existing`): it
//! never creates a file, tables or a migration, however it is called.
//!
//! Exit status: 0 when the command did what it said, 1 when the store refused or failed (no
//! such instance, an instance in the wrong status, a store that cannot be reached, is not there
//! or is not a store of this build), 2 for a command line that does not parse.

mod render;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use swf_runtime::InstanceId;
use swf_runtime::store::{
    AnyStore, ListFilter, MAX_LIST_LIMIT, MIN_PURGE_AGE, PurgeFilter, Purged, Status, Store,
    StoreError, Versions,
};

/// Operate the workflow instances of a store.
#[derive(Debug, Parser)]
#[command(name = "swf", version, about, long_about = None)]
struct Cli {
    /// The store: `sqlite:PATH` (or a path ending in .db/.sqlite) or `postgres://...`. It
    /// must exist: swf opens only a store a DurableHost created, and changes nothing to open it
    /// (a missing file, or a database without a store, is an error).
    #[arg(
        long,
        short,
        env = "SWF_STORE",
        global = true,
        default_value = "swf.db"
    )]
    store: String,
    /// Print JSON instead of text (one object per instance for `list`).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List instances, newest first.
    List {
        /// Only instances of this workflow id.
        #[arg(long, short)]
        workflow: Option<String>,
        /// Only instances whose definition has this version (the workflow's `version`): what
        /// is left of a release before its workers go.
        #[arg(long = "workflow-version")]
        workflow_version: Option<String>,
        /// Only instances with this status (runnable, waiting, completed, failed, cancelled);
        /// may be given several times.
        #[arg(long = "status", value_parser = parse_status)]
        statuses: Vec<Status>,
        /// At most this many: a page, of at most 1000 (the most a store lists at once). A
        /// page as long as the limit may not be the last: ask for the next with `--before`.
        #[arg(long, default_value_t = 50, value_parser = parse_limit)]
        limit: usize,
        /// Only instances older than this one (the last id of the previous page).
        #[arg(long)]
        before: Option<u64>,
    },
    /// Show one instance: where it is, its data, its inbox and the history of its transitions.
    Show {
        /// The instance's id.
        id: u64,
    },
    /// Cancel an instance that has not ended, or a failed one (it is not redriven then): it stops
    /// at its last committed state.
    Cancel {
        /// The instance's id.
        id: u64,
        /// Why (kept in its history).
        #[arg(long, default_value = "cancelled by an operator")]
        reason: String,
    },
    /// Resume a failed instance from its last committed state: the step that failed runs
    /// again (fix the fault first).
    Redrive {
        /// The instance's id.
        id: u64,
    },
    /// Remove the instances that ended longer ago than `--older-than` (with their history and
    /// the events they produced) and the received events no instance holds any more. Instances
    /// that have not ended are never touched.
    Purge {
        /// How long ago, at least a minute: `30d`, `12h`, `90 days`, `P30D` (a day is 24 hours).
        #[arg(long, value_parser = parse_age)]
        older_than: std::time::Duration,
        /// Only instances and events of this workflow id.
        #[arg(long, short)]
        workflow: Option<String>,
        /// How many instances (and events) one transaction removes at most.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
        batch: u32,
    },
}

/// `30d`, `12h`, `P30D`: a span of days and smaller units, a day being 24 hours.
fn parse_age(text: &str) -> Result<std::time::Duration, String> {
    let refuse = |why: String| {
        format!("`{text}` is not an age ({why}); write one such as `30d`, `12h` or `P30D`")
    };
    let span: jiff::Span = text.parse().map_err(|error| refuse(format!("{error}")))?;
    let length = span
        .to_duration(jiff::SpanRelativeTo::days_are_24_hours())
        .map_err(|_| refuse("months and years have no fixed length: count days".to_string()))?;
    let age =
        std::time::Duration::try_from(length).map_err(|_| refuse("it is negative".to_string()))?;
    if age < MIN_PURGE_AGE {
        // A sender retrying an event whose answer it lost must still find it known.
        return Err(refuse(
            "under a minute: an event a sender retries after that would be taken as new"
                .to_string(),
        ));
    }
    Ok(age)
}

/// A page's length: the stores list at most [`MAX_LIST_LIMIT`] instances at once, and a longer
/// limit silently gave that many, which looked like the last page.
fn parse_limit(text: &str) -> Result<usize, String> {
    let limit: usize = text
        .parse()
        .map_err(|error| format!("`{text}` is not a number of instances ({error})"))?;
    if limit > MAX_LIST_LIMIT {
        return Err(format!(
            "`{text}` is more than a page: swf lists at most {MAX_LIST_LIMIT} instances at once; \
             page through more with `--before ID`, ID being the last id of the previous page"
        ));
    }
    Ok(limit)
}

fn parse_status(text: &str) -> Result<Status, String> {
    Status::parse(&text.to_ascii_lowercase()).ok_or_else(|| {
        let names: Vec<&str> = Status::ALL.iter().map(|status| status.as_str()).collect();
        format!("`{text}` is not a status; use one of {}", names.join(", "))
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Ok(()) => ExitCode::SUCCESS,
                // A reader that has read enough (`swf list | head`) is not a failure; `print!`
                // panicked on it (exit status 101).
                Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("error: cannot write the output: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<String, StoreError> {
    // Only a store a host created: a read must not create one where the path is mistyped,
    // nor give another application's database the store's tables.
    let store = AnyStore::open_existing(&cli.store).await?;
    let now = swf_runtime::Timestamp::now();
    match cli.command {
        Command::List {
            workflow,
            workflow_version,
            statuses,
            limit,
            before,
        } => {
            let filter = ListFilter {
                workflow,
                versions: workflow_version
                    .map_or(Versions::Any, |version| Versions::Only(Some(version))),
                statuses,
                before: before.map(InstanceId::new),
                limit,
            };
            let instances = store.list(&filter).await?;
            Ok(render::list(&instances, cli.json))
        }
        Command::Show { id } => {
            let id = InstanceId::new(id);
            let claimed = store.instance(id).await?.ok_or_else(|| not_found(id))?;
            let history = store.history(id).await?;
            Ok(render::show(&claimed, &history, cli.json))
        }
        Command::Cancel { id, reason } => {
            let id = InstanceId::new(id);
            let leftovers = store.cancel(id, &reason, now).await?;
            Ok(render::cancelled(id, &leftovers, cli.json))
        }
        Command::Redrive { id } => {
            let id = InstanceId::new(id);
            store.redrive(id, now).await?;
            let claimed = store.instance(id).await?.ok_or_else(|| not_found(id))?;
            Ok(render::redriven(&claimed, cli.json))
        }
        Command::Purge {
            older_than,
            workflow,
            batch,
        } => {
            let filter = PurgeFilter {
                workflow,
                before: before(now, older_than),
                limit: batch as usize,
            };
            let mut total = Purged::default();
            loop {
                let purged = store.purge(&filter).await?;
                total += purged;
                if !purged.may_have_more(filter.limit) {
                    break;
                }
            }
            Ok(render::purged(&total, filter.before, cli.json))
        }
    }
}

fn not_found(id: InstanceId) -> StoreError {
    StoreError::new(
        swf_runtime::store::StoreErrorKind::NotFound,
        format!("there is no instance {id} in this store"),
    )
}

/// `now - age`, or the first instant when the age reaches past it.
fn before(now: swf_runtime::Timestamp, age: std::time::Duration) -> swf_runtime::Timestamp {
    jiff::SignedDuration::try_from(age)
        .ok()
        .and_then(|age| now.checked_sub(age).ok())
        .unwrap_or(swf_runtime::Timestamp::MIN)
}
