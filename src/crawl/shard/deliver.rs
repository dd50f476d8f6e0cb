//! The hand-over of a fetched page to the caller's hooks: the handler
//! (`Crawler::on_page`) and the page stream get it, and of its links those
//! in scope and let through by the follow rule come back to be routed.
//!
//! Not the fetch nor the record (`page.rs`), nor the routing of the links
//! (`seen.rs`).

use url::Url;

use crate::crawl::page::Page;
use crate::net::fetch::Response;
use crate::output::record::Record;
use crate::web::scope::Scope;

use super::Shard;

impl Shard {
    /// Hand a fetched page to the caller's hooks (handler, stream) and
    /// return the links of it to follow: in scope, and let through by the
    /// follow rule if there is one.
    pub(super) fn deliver(
        &self,
        record: &mut Record,
        response: &Response,
        body: &[u8],
        links: &[Url],
    ) -> Vec<Url> {
        self.deliver_with(record, response, body, links, Scope::allows)
    }

    /// [`Shard::deliver`], with the links in scope by `rule` (a sitemap
    /// index lists sitemaps: starts, not links).
    pub(super) fn deliver_with(
        &self,
        record: &mut Record,
        response: &Response,
        body: &[u8],
        links: &[Url],
        rule: fn(&Scope, &Url) -> bool,
    ) -> Vec<Url> {
        let page = Page {
            record,
            head: response.head_bytes.as_deref().unwrap_or(&[]),
            body,
            links,
        };
        self.hand_over(&page);
        let scope = self.scope();
        let follow = links
            .iter()
            .filter(|l| rule(&scope, l))
            .filter(|l| self.hooks.follow.as_ref().is_none_or(|rule| rule(l, &page)))
            .cloned()
            .collect();
        record.delivered = true;
        follow
    }

    /// Call this shard's handler with `page` and queue it on the stream.
    pub(super) fn hand_over(&self, page: &Page<'_>) {
        if let Some(handler) = self.handler.borrow_mut().as_mut() {
            handler(page);
        }
        if let Some(stream) = &self.hooks.stream {
            stream.send(page.to_owned());
        }
    }
}
