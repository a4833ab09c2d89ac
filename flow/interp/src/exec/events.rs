//! async_work_group_copy's events. Each copy a work-group makes returns an
//! event of its own (or the one it was given, which it joins);
//! wait_group_events marks the events it is given as waited for. OpenCL
//! requires every work-item of the group to pass a copy the same arguments
//! and to wait for the same events; a copy whose event is never waited for
//! may not have arrived when its data is used; an event no copy returned is
//! waited for in vain. All four are faults.

/// Events are numbered from here: no pointer and no zero event has such a
/// value.
const FIRST_EVENT: u64 = 0xE7E7_0000_0000_0000;

/// A copy's arguments, in the order `differs` names them.
pub(super) const COPY_ARGUMENTS: [&str; 5] =
    ["destination", "source", "element count", "stride", "event"];

/// The copies of the work-group being run.
#[derive(Debug, Default)]
pub(super) struct Events {
    /// Each copy's pc, and whether its event was waited for.
    copies: Vec<(usize, bool)>,
}

impl Events {
    pub fn clear(&mut self) {
        self.copies.clear();
    }

    /// The event a copy at `pc` returns, given the event it was passed.
    pub fn copy(&mut self, pc: usize, given: u64) -> u64 {
        if self.index(given).is_some() {
            return given;
        }
        self.copies.push((pc, false));
        FIRST_EVENT + self.copies.len() as u64 - 1
    }

    /// Marks `event` waited for; false if no copy of the group returned
    /// it (a zero event, or one never assigned).
    pub fn wait(&mut self, event: u64) -> bool {
        let copy = self.index(event);
        if let Some(i) = copy {
            self.copies[i].1 = true;
        }
        copy.is_some()
    }

    /// A copy that faulted: nothing of it is to be waited for.
    pub fn forget(&mut self, event: u64) {
        self.wait(event);
    }

    /// The pc of the first copy whose event was never waited for.
    pub fn unwaited(&self) -> Option<usize> {
        self.copies.iter().find(|c| !c.1).map(|c| c.0)
    }

    fn index(&self, event: u64) -> Option<usize> {
        let i = event.checked_sub(FIRST_EVENT)? as usize;
        (i < self.copies.len()).then_some(i)
    }
}

/// The first of `values` that differs from `first`'s, by position.
pub(super) fn differs<T: PartialEq>(first: &[T], values: &[T]) -> Option<usize> {
    first.iter().zip(values).position(|(a, b)| a != b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_copy_has_its_event_unless_it_joins_one() {
        let mut events = Events::default();
        let a = events.copy(10, 0);
        let b = events.copy(20, 0);
        assert_ne!(a, b);
        assert_eq!(events.copy(30, a), a);
        assert!(events.wait(a));
        assert!(!events.wait(0), "no copy returned a zero event");
        assert!(!events.wait(b + 1));
        assert_eq!(events.unwaited(), Some(20));
        assert!(events.wait(b));
        assert_eq!(events.unwaited(), None);
        events.clear();
        assert_eq!(events.copy(40, 0), a, "numbered afresh for each group");
    }
}
