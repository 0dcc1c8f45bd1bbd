//! The `page-random` order: pages in a random order, and each page's
//! nodes in an order of their own, so a walk takes one TLB miss per page.

use super::{SplitMix64, ZeroFirst};

/// Pages in a random order, nodes in a random order within each page.
#[derive(Debug, Clone)]
pub(super) struct PageOrder {
    pub(super) nodes: u64,
    pub(super) spacing: u64,
    pub(super) per_page: u64,
    /// Pages in visiting order: page 0 first, a partial last page last.
    pub(super) pages: ZeroFirst,
    /// Full pages (the partial one, if any, is not permuted).
    pub(super) full_pages: u64,
    pub(super) seed: u64,
}

impl PageOrder {
    pub(super) fn page(&self, position: u64) -> u64 {
        if position < self.full_pages {
            self.pages.apply(position)
        } else {
            position
        }
    }

    pub(super) fn page_position(&self, page: u64) -> u64 {
        if page < self.full_pages {
            self.pages.invert(page)
        } else {
            page
        }
    }

    /// The order of the nodes within `page`: node 0 first in page 0.
    pub(super) fn within(&self, page: u64) -> ZeroFirst {
        let count = (self.nodes - page * self.per_page).min(self.per_page);
        ZeroFirst::new(count, self.seed ^ mix_page(page))
    }

    pub(super) fn node(&self, position: u64) -> u64 {
        let page = self.page(position / self.per_page);
        page * self.per_page + self.within(page).apply(position % self.per_page)
    }
}

/// A per-page key: each page's nodes get their own order.
fn mix_page(page: u64) -> u64 {
    SplitMix64::new(page).next_u64()
}
