//! SIGINT and SIGTERM for the binary: the first one interrupts the crawl
//! (it winds down, writes its records and prints the report); a later one
//! from someone else exits at once with 130.
//!
//! "Someone else" is what makes wrappers safe. coreutils `timeout` sends
//! its signal to the crawler and then to its whole process group, so the
//! crawler gets two copies a few microseconds apart; counting the second as
//! "stop now" lost the report. So a second signal is ignored when it comes
//! within [`GRACE`] of the first, or from the same process as the first
//! (`timeout`, a supervisor, a shell's `kill` twice). Ctrl-C pressed again a
//! moment later (the kernel sends it on the terminal's behalf), or a signal
//! from another process, still stops at once; so does SIGKILL, which is how
//! `timeout -k` and container runtimes escalate.
//!
//! Not the crawl's own stop: that is the library's [`ringcrawl::Interrupt`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::exfiltrator::WithOrigin;
use signal_hook::iterator::SignalsInfo;

/// Signals closer than this to the first are copies of it.
pub const GRACE: Duration = Duration::from_secs(1);

/// Watch SIGINT and SIGTERM on a thread of their own: the first sets
/// `interrupt`; see the module docs for the later ones.
pub fn watch(interrupt: Arc<AtomicBool>) -> std::io::Result<()> {
    let mut signals = SignalsInfo::<WithOrigin>::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            let mut first: Option<(Instant, Option<i32>)> = None;
            for origin in signals.forever() {
                let sender = origin.process.map(|p| p.pid);
                match first {
                    None => {
                        interrupt.store(true, Ordering::Relaxed);
                        first = Some((Instant::now(), sender));
                    }
                    Some((at, first_sender)) => {
                        if exits_at_once(at.elapsed(), first_sender, sender) {
                            signal_hook::low_level::exit(130);
                        }
                    }
                }
            }
        })?;
    Ok(())
}

/// Whether a signal that came `since_first` after the first one, from
/// `sender` (None: the kernel, as for Ctrl-C), stops the process at once.
fn exits_at_once(since_first: Duration, first_sender: Option<i32>, sender: Option<i32>) -> bool {
    let same_process = sender.is_some() && sender == first_sender;
    since_first >= GRACE && !same_process
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_second_copy_to_the_process_group_is_ignored() {
        // The same sender, microseconds later.
        assert!(!exits_at_once(Duration::from_micros(20), Some(7), Some(7)));
        // Another sender in the same instant is still a copy.
        assert!(!exits_at_once(Duration::from_millis(5), Some(7), Some(8)));
    }

    #[test]
    fn ctrl_c_pressed_again_later_exits_at_once() {
        assert!(exits_at_once(Duration::from_secs(2), None, None));
        assert!(exits_at_once(Duration::from_secs(2), Some(7), None));
        assert!(exits_at_once(Duration::from_secs(2), Some(7), Some(8)));
    }

    #[test]
    fn the_same_process_signalling_again_never_skips_the_clean_stop() {
        assert!(!exits_at_once(Duration::from_secs(60), Some(7), Some(7)));
    }
}
