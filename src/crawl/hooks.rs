//! The hooks that see each page, as the shards hold them ([`Hooks`]): the
//! page handler, the follow rule and the page stream's sender; and the
//! live numbers' handle, which the shards publish to.
//!
//! Not the pages (`super::page`) nor the stream's queue (`super::stream`).

use url::Url;

use crate::output::live::Live;

use super::page::Page;
use super::stream::PageSender;

/// A handler of one shard: called on that shard's thread for each page,
/// in the order they arrive there.
pub(crate) type Handler = Box<dyn FnMut(&Page<'_>)>;

/// Makes each shard's handler (on the shard's own thread).
pub(crate) type HandlerFactory = Box<dyn Fn(usize) -> Handler + Send + Sync>;

/// Decides whether a link of a page is followed.
pub(crate) type FollowRule = Box<dyn Fn(&Url, &Page<'_>) -> bool + Send + Sync>;

/// What a crawl delivers pages to, shared by every shard.
#[derive(Default)]
pub(crate) struct Hooks {
    pub handler: Option<HandlerFactory>,
    pub follow: Option<FollowRule>,
    pub stream: Option<PageSender>,
    /// The live numbers, published by the shards for a status server.
    pub live: Option<Live>,
}

impl Hooks {
    /// Whether any hook wants pages (else the shards build none).
    pub(crate) fn wants_pages(&self) -> bool {
        self.handler.is_some() || self.follow.is_some() || self.stream.is_some()
    }
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("handler", &self.handler.is_some())
            .field("follow", &self.follow.is_some())
            .field("stream", &self.stream.is_some())
            .field("live", &self.live.is_some())
            .finish()
    }
}
