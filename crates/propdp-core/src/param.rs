//! A sweepable numeric parameter: a scalar, a list, or a range
//! `{ from, to, steps, scale = "lin" | "log" }`.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

use crate::error::ConfigError;

/// Spacing of a [`ParamSpec::Range`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Evenly spaced.
    Lin,
    /// Evenly spaced in log scale (from, to > 0).
    Log,
}

/// Most values one parameter may take.
pub const MAX_VALUES: u32 = 1_000_000;

/// One numeric config value that may be swept.
///
/// ```
/// use propdp_core::param::ParamSpec;
/// let p: ParamSpec = toml::from_str::<toml::Table>("x = { from = 1.0, to = 100.0, steps = 3, scale = \"log\" }")
///     .unwrap()["x"].clone().try_into().unwrap();
/// let v = p.values("x").unwrap();
/// assert!((v[1] - 10.0).abs() < 1e-12);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamSpec {
    /// One value.
    Scalar(f64),
    /// These values, in order.
    List(Vec<f64>),
    /// `steps` values from `from` to `to` (both included).
    Range {
        /// First value.
        from: f64,
        /// Last value.
        to: f64,
        /// Number of values (≥ 1).
        steps: u32,
        /// Spacing.
        scale: Scale,
    },
}

impl ParamSpec {
    /// The values this parameter takes, in order. `field` names it in errors.
    pub fn values(&self, field: &str) -> Result<Vec<f64>, ConfigError> {
        self.values_named(|| field.to_string())
    }

    /// [`ParamSpec::values`] with the field's name built only for an error
    /// (sweeps read every parameter of every config).
    pub(crate) fn values_named(&self, field: impl Fn() -> String) -> Result<Vec<f64>, ConfigError> {
        let v = match self {
            ParamSpec::Scalar(x) => vec![*x],
            ParamSpec::List(xs) => {
                if xs.is_empty() {
                    return Err(ConfigError::range(&field(), "[]", "a non-empty list"));
                }
                xs.clone()
            }
            &ParamSpec::Range { from, to, steps, scale } => {
                if !(1..=MAX_VALUES).contains(&steps) {
                    return Err(ConfigError::range(
                        &format!("{}.steps", field()),
                        steps,
                        "1 ≤ steps ≤ 1000000",
                    ));
                }
                if scale == Scale::Log && !(from > 0.0 && to > 0.0) {
                    return Err(ConfigError::range(
                        &field(),
                        format!("from = {from}, to = {to}"),
                        "from > 0 and to > 0 with scale = \"log\"",
                    ));
                }
                if steps == 1 {
                    vec![from]
                } else {
                    let last = f64::from(steps - 1);
                    (0..steps)
                        .map(|i| {
                            let t = f64::from(i) / last;
                            if i == 0 {
                                return from;
                            }
                            if i == steps - 1 {
                                return to;
                            }
                            match scale {
                                // from + t·(to − from), unless to − from overflows
                                Scale::Lin if (to - from).is_finite() => from + t * (to - from),
                                Scale::Lin => from * (1.0 - t) + to * t,
                                Scale::Log => (from.ln() + t * (to.ln() - from.ln())).exp(),
                            }
                        })
                        .collect()
                }
            }
        };
        if let Some(bad) = v.iter().find(|x| !x.is_finite()) {
            return Err(ConfigError::range(&field(), bad, "a finite number"));
        }
        if let (ParamSpec::List(_), Some((i, j))) = (self, repeated(&v)) {
            // a repeated value repeats its points (each solved, simulated or calibrated again)
            return Err(ConfigError::range(
                &field(),
                format!(
                    "{} (at positions {} and {} of the list of {})",
                    v[i],
                    i + 1,
                    j + 1,
                    v.len()
                ),
                "distinct values: each is listed once",
            ));
        }
        Ok(v)
    }

    /// True when this parameter takes more than one value.
    pub fn is_swept(&self) -> bool {
        match self {
            ParamSpec::Scalar(_) => false,
            ParamSpec::List(xs) => xs.len() > 1,
            ParamSpec::Range { steps, .. } => *steps > 1,
        }
    }
}

/// The positions (first, second) of the first value of `v` listed twice
/// (by the order of the second listing), if any.
fn repeated(v: &[f64]) -> Option<(usize, usize)> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v[a].total_cmp(&v[b]).then(a.cmp(&b)));
    order
        .windows(2)
        .filter(|w| v[w[0]] == v[w[1]])
        .map(|w| (w[0], w[1]))
        .min_by_key(|&(_, j)| j)
}

impl From<f64> for ParamSpec {
    fn from(x: f64) -> Self {
        ParamSpec::Scalar(x)
    }
}

impl<'de> Deserialize<'de> for ParamSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ParamVisitor)
    }
}

struct ParamVisitor;

const EXPECTED: &str = "a number, a list of numbers, or a range { from, to, steps, scale = \"lin\" | \"log\" }";

impl<'de> Visitor<'de> for ParamVisitor {
    type Value = ParamSpec;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(EXPECTED)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamSpec, E> {
        Ok(ParamSpec::Scalar(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamSpec, E> {
        Ok(ParamSpec::Scalar(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamSpec, E> {
        Ok(ParamSpec::Scalar(v as f64))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParamSpec, A::Error> {
        let mut xs = Vec::new();
        while let Some(x) = seq.next_element::<Num>()? {
            xs.push(x.0);
        }
        Ok(ParamSpec::List(xs))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ParamSpec, A::Error> {
        let (mut from, mut to, mut steps, mut scale) = (None, None, None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "from" => from = Some(map.next_value::<Num>()?.0),
                "to" => to = Some(map.next_value::<Num>()?.0),
                "steps" => steps = Some(map.next_value::<u32>()?),
                "scale" => scale = Some(map.next_value::<Scale>()?),
                other => {
                    return Err(de::Error::unknown_field(other, &["from", "to", "steps", "scale"]));
                }
            }
        }
        Ok(ParamSpec::Range {
            from: from.ok_or_else(|| de::Error::missing_field("from"))?,
            to: to.ok_or_else(|| de::Error::missing_field("to"))?,
            steps: steps.ok_or_else(|| de::Error::missing_field("steps"))?,
            scale: scale.unwrap_or(Scale::Lin),
        })
    }
}

/// A number written as a TOML integer or float.
struct Num(f64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
        }
        d.deserialize_any(V)
    }
}
