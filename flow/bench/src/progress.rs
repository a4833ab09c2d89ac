//! A run's steps as it goes, for progress displays: each benchmark of the
//! catalogue, the empty kernel and each cost kernel is one step, named as
//! errors name it, with the seconds it is expected to take, so that a
//! display can say how long the whole run will take before it starts.

use crate::error::Result;

/// One step of a run, before it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub id: String,
    /// Its expected duration (an estimate from the plan's launch counts and
    /// target times: what the rest of a run takes is scaled by how the
    /// steps done so far kept to theirs).
    pub expected_s: f64,
}

impl Step {
    pub(crate) fn new(id: impl Into<String>, expected_s: f64) -> Self {
        Step { id: id.into(), expected_s }
    }
}

/// The expected seconds of `steps` together.
pub fn expected_s(steps: &[Step]) -> f64 {
    steps.iter().map(|s| s.expected_s).sum()
}

/// What a run reports as it goes.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// Step `index` of `total` (counting from 0) of this part of the run is
    /// about to run.
    Starting {
        index: usize,
        total: usize,
        id: &'a str,
    },
    /// It ran; `figure` says what it measured.
    Finished {
        index: usize,
        total: usize,
        id: &'a str,
        figure: &'a str,
    },
}

/// Runs a part's planned steps in order, telling `on_event` of each.
pub(crate) struct Steps<'p, 'e> {
    planned: &'p [Step],
    next: usize,
    on_event: &'e mut dyn FnMut(Event<'_>),
}

impl<'p, 'e> Steps<'p, 'e> {
    pub fn new(planned: &'p [Step], on_event: &'e mut dyn FnMut(Event<'_>)) -> Self {
        Steps { planned, next: 0, on_event }
    }

    /// Runs the next planned step, which must be `id`, and says what it
    /// measured with `figure`.
    pub fn run<T>(
        &mut self,
        id: &str,
        step: impl FnOnce() -> Result<T>,
        figure: impl FnOnce(&T) -> String,
    ) -> Result<T> {
        let index = self.next;
        let total = self.planned.len();
        assert_eq!(
            self.planned.get(index).map(|s| s.id.as_str()),
            Some(id),
            "a run's steps come in the order they were planned"
        );
        (self.on_event)(Event::Starting { index, total, id });
        let value = step()?;
        self.next += 1;
        let figure = figure(&value);
        (self.on_event)(Event::Finished { index, total, id, figure: &figure });
        Ok(value)
    }

    /// Whether every planned step ran.
    pub fn finished(&self) -> bool {
        self.next == self.planned.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_in_their_planned_order_and_say_each() {
        let planned = [Step::new("a", 1.0), Step::new("b", 2.5)];
        assert_eq!(expected_s(&planned), 3.5);
        let mut seen = Vec::new();
        let mut on_event = |event: Event<'_>| {
            seen.push(match event {
                Event::Starting { index, total, id } => format!("start {index}/{total} {id}"),
                Event::Finished { index, id, figure, .. } => format!("done {index} {id} {figure}"),
            })
        };
        {
            let mut steps = Steps::new(&planned, &mut on_event);
            assert_eq!(steps.run("a", || Ok(2), |v| format!("{v} x")).unwrap(), 2);
            assert!(!steps.finished());
            steps.run("b", || Ok(()), |_| "ok".into()).unwrap();
            assert!(steps.finished());
        }
        assert_eq!(
            seen,
            ["start 0/2 a", "done 0 a 2 x", "start 1/2 b", "done 1 b ok"]
        );
    }

    #[test]
    #[should_panic(expected = "planned")]
    fn a_step_out_of_its_order_is_a_bug() {
        let planned = [Step::new("a", 1.0)];
        let mut on_event = |_: Event<'_>| {};
        let mut steps = Steps::new(&planned, &mut on_event);
        let _ = steps.run("b", || Ok(()), |_| String::new());
    }
}
