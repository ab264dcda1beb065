//! The path of a part of an event, as Python reaches it
//! (`events[2].event.sample_rate`): the core names a part out of range by
//! its index among the event's parts (`segment[2].sample_rate`,
//! `objective[0].a`, [`Event::parts`]); [`located`] walks the event in the
//! same order and names it by its path instead, the one place the two
//! namings meet.

use propdp::core::accountant::events::Event;

/// The path in `event` of the part the core's error names: `segment[i].f`
/// is the i-th Gaussian release (its `noise_multiplier`; the `sample_rate`
/// of the Poisson sample around it; `steps` the `count` of a
/// self-composition around it that is 0), `objective[j].f` the objective
/// release j (counted with repetitions); a path is written as Python
/// reaches it (`events[2].event.sample_rate`), the outermost event
/// unnamed. Any other argument (`delta`, `neighbouring`) is unchanged.
pub(crate) fn located(event: &Event, argument: &str) -> String {
    let whole = if matches!(event, Event::Composed(_)) {
        "events"
    } else {
        "event"
    };
    let (part, field) = argument.split_once('.').unwrap_or((argument, ""));
    let index = |kind: &str| {
        part.strip_prefix(kind)
            .and_then(|s| s.strip_prefix('['))
            .and_then(|s| s.strip_suffix(']'))
            .and_then(|s| s.parse::<u64>().ok())
    };
    let target = match (index("segment"), index("objective")) {
        (Some(i), _) => Target::Segment(i),
        (_, Some(j)) => Target::Objective(j),
        _ => {
            return match argument {
                "segment" => whole.to_string(),
                "steps" => "count".to_string(),
                "objective" => first_objective(event, "").map_or_else(|| whole.to_string(), |p| or_whole(&p)),
                other => other.to_string(),
            };
        }
    };
    let mut walk = Walk {
        target,
        field,
        segments: 0,
        releases: 0,
        found: None,
    };
    walk.visit(event, "", 1, &Around::default());
    walk.found.unwrap_or_else(|| argument.to_string())
}

/// `path`, or the whole event's name when it is the outermost one.
pub(crate) fn or_whole(path: &str) -> String {
    if path.is_empty() { "event".into() } else { path.into() }
}

/// `field` of the event at `path`.
pub(crate) fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

enum Target {
    Segment(u64),
    Objective(u64),
}

/// The paths around a part: the Poisson sample it is in, and the
/// self-compositions (with their counts) it is in, innermost last.
#[derive(Default, Clone)]
struct Around {
    sample: Option<String>,
    counts: Vec<(String, u64)>,
}

impl Around {
    /// The `count` that makes the part's steps 0 or too many (the innermost 0, else the outermost).
    fn count(&self) -> String {
        let zero = self.counts.iter().rev().find(|(_, c)| *c == 0);
        zero.or(self.counts.first())
            .map_or_else(|| "count".into(), |(p, _)| join(p, "count"))
    }
}

struct Walk<'a> {
    target: Target,
    field: &'a str,
    segments: u64,
    releases: u64,
    found: Option<String>,
}

impl Walk<'_> {
    /// Visit the parts in [`Event::parts`]' order, `times` the product of the counts around.
    fn visit(&mut self, event: &Event, path: &str, times: u64, around: &Around) {
        if self.found.is_some() {
            return;
        }
        match event {
            Event::Gaussian { .. } => {
                if matches!(self.target, Target::Segment(i) if i == self.segments) {
                    self.found = Some(match self.field {
                        "sample_rate" => join(around.sample.as_deref().unwrap_or(path), "sample_rate"),
                        "steps" => around.count(),
                        f => join(path, f),
                    });
                }
                self.segments += 1;
            }
            Event::PoissonSampled { event, .. } => {
                if !matches!(**event, Event::Gaussian { .. }) {
                    if matches!(self.target, Target::Segment(i) if i == self.segments) {
                        self.found = Some(join(path, "event"));
                    }
                    return;
                }
                let inner = Around {
                    sample: Some(path.to_string()),
                    ..around.clone()
                };
                self.visit(event, &join(path, "event"), times, &inner);
            }
            Event::SelfComposed { event, count } => {
                let mut inner = around.clone();
                inner.counts.push((path.to_string(), *count));
                self.visit(event, &join(path, "event"), times.saturating_mul(*count), &inner);
            }
            Event::Composed(events) => {
                for (i, e) in events.iter().enumerate() {
                    self.visit(e, &join(path, &format!("events[{i}]")), times, around);
                }
            }
            Event::Objective(_) => {
                if matches!(self.target, Target::Objective(j) if j == self.releases) {
                    self.found = Some(match self.field {
                        "count" => around.count(),
                        f => join(path, f),
                    });
                }
                self.releases = self.releases.saturating_add(times);
            }
        }
    }
}

/// The path of the first objective release in `event`.
fn first_objective(event: &Event, path: &str) -> Option<String> {
    match event {
        Event::Objective(_) => Some(path.to_string()),
        Event::PoissonSampled { event, .. } | Event::SelfComposed { event, .. } => {
            first_objective(event, &join(path, "event"))
        }
        Event::Composed(events) => {
            (events.iter().enumerate()).find_map(|(i, e)| first_objective(e, &join(path, &format!("events[{i}]"))))
        }
        Event::Gaussian { .. } => None,
    }
}
