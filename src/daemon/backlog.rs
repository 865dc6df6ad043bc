//! Reading back what left the ring: a subscriber that fell behind (or resumes from an old id)
//! reads the events log from where it got to, a budget of bytes at a time, remembering the file
//! and offset so that catching up reads each line once. A resume far into a large log finds its
//! place by bisection, not by reading the log from its start; files are opened as regular files
//! only (a FIFO among them is passed over, never waited on); and reads run on threads of their
//! own, a few at a time, never on the pool dispatches run on.
//!
//! The reading itself is [`crate::events::LogCursor`]'s.

pub(super) use crate::events::LogCursor;

/// How many read-backs run at once, whatever the number of subscribers resuming.
const READERS: usize = 2;

static READING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(READERS);

/// Run `read` on a thread of its own once one of [`READERS`] places is free: never on the
/// blocking pool that dispatches run on, so read-backs, however many and however slow, cannot
/// hold a dispatch up. `None` if it could not run.
pub(super) async fn off_the_dispatch_pool<T: Send + 'static>(
    read: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let _place = READING.acquire().await.ok()?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("hookd-backlog".into())
        .spawn(move || {
            let _ = tx.send(read());
        })
        .ok()?;
    rx.await.ok()
}
