//! A queue's messages as a pull stream: fetches a batch at a time, hands them out one by one,
//! and gives back what it fetched and did not hand out.

use crate::base::error::{Error, Result};
use crate::base::options::MessagesOptions;
use crate::ops::delivery::Delivery;
use crate::ops::handover::Handover;
use crate::ops::queue::Queue;

/// The messages of one queue, pulled one at a time with [`next`](Messages::next): each fetch
/// leases up to `batch` due messages (waiting up to `wait` for the first, woken by a publish,
/// and fetching again while nothing is due), and the stream hands them out in their order.
/// Settle every message it hands out.
///
/// What was fetched and not handed out yet is released (due again at once, no attempt
/// counted) by [`close`](Messages::close), or when the stream is dropped. Cancel-safe: a
/// `next()` future dropped while it fetches leaves nothing leased (as [`Queue::fetch`]), and
/// one dropped after its fetch finished leaves the messages in the stream, for the next call
/// or the release.
pub struct Messages {
    queue: Queue,
    opts: MessagesOptions,
    /// Fetched, not handed out yet: released when dropped.
    buffer: Handover,
    closed: bool,
}

impl Queue {
    /// This queue's messages as a pull stream ([`Messages`]). Refuses bad options
    /// (`InvalidArgument` naming the field and its limit) before anything is fetched.
    pub fn messages(&self, opts: MessagesOptions) -> Result<Messages> {
        opts.validate()?;
        Ok(Messages { queue: self.clone(), opts, buffer: Handover::new(Vec::new()), closed: false })
    }
}

impl Messages {
    /// The next message: the first one fetched and not handed out yet, or, when there is none,
    /// the first of the next fetch that leases any. Waits as long as nothing is due. An error
    /// of a fetch is returned as it is; the stream can go on after it. Closed, it refuses.
    pub async fn next(&mut self) -> Result<Delivery> {
        loop {
            if self.closed {
                return Err(Error::invalid("messages: the stream is closed"));
            }
            if let Some(d) = self.buffer.take_first() {
                return Ok(d);
            }
            let got = self.queue.fetch_leasing(self.opts.batch(), self.opts.wait(), self.opts.ttr).await?;
            // No await from here on: the fetched messages are in the buffer before the future
            // can be dropped.
            self.buffer = Handover::new(got);
        }
    }

    /// How many fetched messages wait to be handed out.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Ends the stream: releases what was fetched and not handed out (due again at once, no
    /// attempt counted) and waits until Redis has it back. Later [`next`](Messages::next)
    /// calls refuse. Calling it again does nothing.
    pub async fn close(&mut self) {
        self.closed = true;
        self.buffer.release().await;
    }

    /// The queue streamed.
    pub fn queue(&self) -> &Queue {
        &self.queue
    }
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages")
            .field("queue", &self.queue.name())
            .field("opts", &self.opts)
            .field("buffer", &self.buffer)
            .field("closed", &self.closed)
            .finish()
    }
}
