//! Which buffer a point is measured in: the last point's, kept as a spare
//! (a series at one size), grown or shrunk within its room (a sweep's
//! sizes, [`Engine::set_room`]), or a new one ([`Engine::fresh_buffer`]).

use std::sync::atomic::Ordering;

use super::{Engine, Error, Point, Workload};

impl Engine {
    /// Sets the spare buffer aside: the next point of its size gets a new
    /// one, mapped while the old is still held (pages just freed are the
    /// first the kernel hands back), so an independent pass of a reading
    /// does not sit on the physical pages (the cache sets, the DRAM banks)
    /// of the pass before it. The old one goes then.
    pub fn fresh_buffer(&mut self) {
        self.retired = self.spare.take();
    }

    /// Lets buffers mapped from now on grow to `capacity` bytes (`None`:
    /// each buffer its point's size). A sweep sets its largest size: each
    /// size then faults only the bytes it adds to the last one's buffer,
    /// the largest size's bytes in all where a new buffer per size faults
    /// about 4x that at a ratio of 1.3 (a GiB takes a second or more).
    pub fn set_room(&mut self, capacity: Option<u64>) {
        self.room = capacity;
    }

    /// A filled buffer for `point`: the spare one when it was made for the
    /// same size, pages and node, or can grow or shrink to its size (see
    /// [`Engine::set_room`]), else a new one (the spare dropped first, so
    /// only one buffer is held, but for one set aside by [`Engine::fresh_buffer`]).
    pub(super) fn workload(&mut self, point: &Point) -> Result<Workload, Error> {
        let key = (point.size, point.pages, point.node);
        let stop = self.stop.clone();
        let stopped = move || stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        let capacity = self.room.map_or(point.size, |room| room.max(point.size));
        let fresh = |stopped: &dyn Fn() -> bool| {
            Workload::prepare_with_room_unless(
                point.size,
                capacity,
                point.pages,
                point.node,
                stopped,
            )
        };
        if self.retired.as_ref().is_some_and(|(k, _)| *k == key) {
            drop(self.spare.take());
            let workload = fresh(&stopped);
            self.retired = None;
            return workload;
        }
        match self.spare.take() {
            Some((spare_key, workload)) if spare_key == key => Ok(workload),
            Some(((_, pages, node), mut workload))
                if self.room.is_some()
                    && (pages, node) == (point.pages, point.node)
                    && point.size <= workload.capacity() =>
            {
                workload.resize_unless(point.size, &stopped)?;
                Ok(workload)
            }
            other => {
                drop(other);
                fresh(&stopped)
            }
        }
    }
}
