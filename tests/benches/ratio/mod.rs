//! Compiled workflows against their hand-written twins, timed as the CPU time of the bench's
//! thread in alternating rounds: on a machine shared with other work, wall-clock samples (what
//! divan reports) include the time the thread waited for a core, and the load drifts during a
//! run; CPU time leaves out the first, and alternating rounds spread the second over both sides.

use std::time::Duration;

/// The CPU time this thread has used.
fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime only writes the struct it is given.
    let time = unsafe {
        let mut time: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut time);
        time
    };
    Duration::new(
        u64::try_from(time.tv_sec).unwrap_or(0),
        u32::try_from(time.tv_nsec).unwrap_or(0),
    )
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `compiled` and `by_hand` `per_round` times each per round, for `rounds` rounds (the
/// first side alternating), each run on an input made by `input` beforehand, and prints the
/// median CPU time per run of each side and the median of the rounds' ratios.
pub fn compare<I>(
    name: &str,
    rounds: usize,
    per_round: usize,
    input: impl Fn() -> I,
    mut compiled: impl FnMut(I),
    mut by_hand: impl FnMut(I),
) {
    let time = |run: &mut dyn FnMut(I)| {
        let inputs: Vec<I> = (0..per_round).map(|_| input()).collect();
        let start = thread_cpu();
        for input in inputs {
            run(input);
        }
        (thread_cpu() - start).as_secs_f64() / per_round as f64
    };
    // A first round warms caches and allocator pools on both sides; it is not counted.
    time(&mut compiled);
    time(&mut by_hand);
    let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = time(&mut compiled);
            (a, time(&mut by_hand))
        } else {
            let b = time(&mut by_hand);
            (time(&mut compiled), b)
        };
        ours.push(a);
        theirs.push(b);
        ratios.push(a / b);
    }
    let micros = |seconds: f64| seconds * 1e6;
    println!(
        "{name}: compiled {:.2} µs, by hand {:.2} µs, ratio {:.2}× (median CPU time per run, \
         {rounds} rounds of {per_round} runs each)",
        micros(median(&mut ours)),
        micros(median(&mut theirs)),
        median(&mut ratios),
    );
}
