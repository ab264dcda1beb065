//! The assessment of a query: the guarantee of its noise, or of the
//! smallest noise meeting its target ([`assess`]), or a DP-SGD knob
//! calibrated to the target ([`calibrate_knob`]).

use super::query::{NoiseLevel, Query, QueryArgs, check};
use super::report::Report;
use crate::error::Argument;
use propdp_core::AlgorithmKind;
use propdp_core::accountant::bracket::{BracketSettings, Method};
use propdp_core::accountant::calibrate::{Knob, Target, calibrate};
use propdp_core::accountant::events::Event;
use propdp_core::accountant::{ExtraRidge, Mechanism, Neighbouring, ObjectiveBound, epsilon, mu_dpgd, mu_output};

/// DP-SGD's steps or sample rate calibrated to the target of `args`
/// (`epsilon` with `delta_priv`, or `rho`) at the noise it gives, on the
/// certified ε (`propdp_accountant::calibrate`; the ε read back is at most
/// the target): the report of the calibrated run. `args` gives the noise
/// and the other knob; the calibrated one is left out.
///
/// ```no_run
/// use propdp::privacy::{calibrate_knob, QueryArgs};
/// use propdp::core::{accountant::calibrate::Knob, AlgorithmKind, ModelKind};
/// let mut a = QueryArgs::new(AlgorithmKind::Dpsgd, ModelKind::Logistic);
/// (a.noise, a.sample_rate, a.epsilon, a.delta_priv) = (Some(1.0), Some(0.01), Some(2.0), Some(1e-5));
/// let r = calibrate_knob(&a, Knob::Steps).unwrap();
/// assert!(r.epsilon.unwrap() <= 2.0);
/// ```
pub fn calibrate_knob(args: &QueryArgs, knob: Knob) -> crate::Result<Report> {
    if knob == Knob::NoiseMultiplier {
        return assess(&args.query()?);
    }
    let name = knob.name();
    if args.algorithm != AlgorithmKind::Dpsgd {
        return Err(Argument::new(
            "calibrate",
            format!(" = {name}: only DP-SGD's steps and sample rate are calibrated (give --algorithm dpsgd)"),
        )
        .into());
    }
    let given = match knob {
        Knob::Steps => args.steps.is_some(),
        _ => args.sample_rate.is_some(),
    };
    if given {
        return Err(Argument::new(
            name,
            format!(" is given: it is what --calibrate {name} solves for; leave it out"),
        )
        .into());
    }
    let Some(noise) = args.noise else {
        return Err(Argument::new("noise", format!(" is required to calibrate {name}")).into());
    };
    let target = match (args.epsilon, args.rho) {
        (Some(epsilon), None) => Target::Approx {
            epsilon,
            delta_priv: args.delta_priv.unwrap_or(1e-6),
        },
        (None, Some(rho)) => Target::Zcdp { rho },
        _ => {
            return Err(Argument::new(
                "epsilon",
                format!(" or rho (one of them) is required to calibrate {name}"),
            )
            .into());
        }
    };
    // the query with a placeholder for the knob: its ranges and the model's sensitivity checked
    let mut q = QueryArgs {
        epsilon: None,
        rho: None,
        ..args.clone()
    };
    match knob {
        Knob::Steps => q.steps = Some(1),
        _ => q.sample_rate = Some(1.0),
    }
    let query = q.query()?;
    let run = query.dpsgd_run(noise);
    let make_event = |v: f64| {
        let (q, t) = match knob {
            Knob::Steps => (run.sample_rate, v as u64),
            _ => (v, run.steps),
        };
        Event::dpsgd(run.noise_multiplier, q, t)
    };
    let c = calibrate(knob, make_event, target, query.neighbouring, BracketSettings::default()).map_err(|e| {
        Argument::new(
            if e.argument() == "sample_rate" {
                "rho"
            } else {
                "epsilon"
            },
            format!(": {e}"),
        )
    })?;
    // calibrated rounds r: the most steps with ⌈T/G⌉ = r
    let (steps, sample_rate) = match knob {
        Knob::Steps => (c.value as usize * query.participation.groups, query.sample_rate),
        _ => (query.steps, c.value),
    };
    assess(&Query {
        steps,
        sample_rate,
        ..query
    })
}

/// The guarantee of the query's noise (calibrated first when it names a target).
///
/// ```
/// use propdp::privacy::{assess, NoiseLevel, Query};
/// use propdp::core::{accountant::Neighbouring, AlgorithmKind, Model};
/// let q = Query {
///     algorithm: AlgorithmKind::Output, model: Model::Logistic, lambda: 1.0, steps: 1, sample_rate: 1.0, clip: None,
///     participation: propdp::privacy::Participation::POISSON, neighbouring: Neighbouring::ReplaceOne, delta_priv: 1e-6, noise: NoiseLevel::Epsilon(1.0),
///     extra_ridge: propdp::core::accountant::ExtraRidge::Auto,
/// };
/// let r = assess(&q).unwrap();
/// assert!((r.epsilon.unwrap() - 1.0).abs() < 1e-9);
/// assert!((r.mu.unwrap() - 2.0 / r.noise).abs() < 1e-12); // μ = 2LR/(λτ)
/// ```
pub fn assess(q: &Query) -> crate::Result<Report> {
    check(q)?;
    // objective perturbation to a target below twice its floor: calibrated at λ + Δ
    let (level, zcdp) = match q.noise {
        NoiseLevel::Given(_) => (0.0, false),
        NoiseLevel::Epsilon(e) => (e, false),
        NoiseLevel::Rho(r) => (r, true),
    };
    let extra = match (q.noise, q.extra_ridge) {
        (NoiseLevel::Given(_), _) | (_, ExtraRidge::Refuse) => 0.0,
        _ => q.mechanism().extra_ridge(level, zcdp),
    };
    if extra > 0.0 {
        let mut report = assess(&Query {
            lambda: q.lambda + extra,
            extra_ridge: ExtraRidge::Refuse,
            ..*q
        })?;
        report.extra_ridge = Some((q.lambda, extra));
        return Ok(report);
    }
    let mech = q.mechanism();
    let settings = BracketSettings::default();
    let calibrated = |target: Target| {
        calibrate(
            Knob::NoiseMultiplier,
            |s| mech.event(s),
            target,
            q.neighbouring,
            settings,
        )
        .ok()
        .map(|c| c.value)
    };
    let noise = match q.noise {
        NoiseLevel::Given(n) => n,
        NoiseLevel::Rho(rho) => {
            calibrated(Target::Zcdp { rho }).ok_or_else(|| unreachable("rho", rho, q, &mech, true))?
        }
        NoiseLevel::Epsilon(eps) => calibrated(Target::Approx {
            epsilon: eps,
            delta_priv: q.delta_priv,
        })
        .ok_or_else(|| unreachable("epsilon", eps, q, &mech, false))?,
    };
    let bracket = |m: &Mechanism| {
        epsilon(&m.event(noise), q.delta_priv, m.neighbouring, settings)
            .ok()
            .flatten()
    };
    let (l, beta) = (mech.lipschitz, mech.curvature);
    let (mu, objective_bound, rdp) = match q.algorithm {
        AlgorithmKind::Output => (Some(mu_output(l, 1.0, q.lambda, noise, q.neighbouring)), None, vec![]),
        AlgorithmKind::Dpgd => (Some(mu_dpgd(l, 1.0, q.rounds(), noise, q.neighbouring)), None, vec![]),
        // q = 1 is the Gaussian mechanism with sensitivity min(C, L)
        AlgorithmKind::Dpsgd => (
            (q.sample_rate >= 1.0)
                .then(|| mu_dpgd(mech.dpsgd_sensitivity(q.clip), 1.0, q.rounds(), noise, q.neighbouring)),
            None,
            vec![],
        ),
        AlgorithmKind::Objective => {
            let b = ObjectiveBound::new(l, beta, 1.0, q.lambda, noise);
            let rdp = [2.0, 8.0, 32.0].iter().map(|&a| (a, b.rdp(a))).collect();
            (None, Some((b.c(), b.a)), rdp)
        }
    };
    // the certified ε; a calibrated noise meets the target by construction
    // (subsampled DP-SGD: the search on the bracket's upper end itself)
    let eps = bracket(&mech);
    if let (NoiseLevel::Epsilon(target), Some(b)) = (q.noise, eps)
        && b.upper > target
    {
        let msg = format!(
            "internal error: the noise {noise:?} calibrated to ε = {target:?} reads back ε ≤ {:?}",
            b.upper
        );
        return Err(crate::error::Error::compute(msg));
    }
    let dpsgd_grid = (q.algorithm == AlgorithmKind::Dpsgd && q.sample_rate < 1.0)
        .then(|| eps.map(|b| (b.grid, b.reached)))
        .flatten();
    let report = Report {
        query: *q,
        noise,
        mu,
        rho: mech.rho(noise),
        objective_bound,
        rdp,
        epsilon: eps.map(|b| b.upper),
        epsilon_lower: eps.map(|b| b.lower),
        bracket: dpsgd_grid,
        rdp_epsilon: (q.algorithm == AlgorithmKind::Dpsgd)
            .then(|| {
                let rdp = BracketSettings {
                    method: Method::Rdp,
                    ..BracketSettings::default()
                };
                epsilon(&mech.event(noise), q.delta_priv, q.neighbouring, rdp)
                    .ok()
                    .flatten()
            })
            .flatten()
            .map(|b| b.upper),
        extra_ridge: None,
        // what Opacus and dp_accounting (add/remove-one by default) report for the same run
        epsilon_add_remove: match (q.algorithm, q.neighbouring) {
            (AlgorithmKind::Dpsgd, Neighbouring::AddRemoveOne) => eps.map(|b| b.upper),
            (AlgorithmKind::Dpsgd, Neighbouring::ReplaceOne) => bracket(
                &Query {
                    neighbouring: Neighbouring::AddRemoveOne,
                    ..*q
                }
                .mechanism(),
            )
            .map(|b| b.upper),
            (AlgorithmKind::Objective | AlgorithmKind::Output | AlgorithmKind::Dpgd, _) => None,
        },
    };
    report.check()?;
    Ok(report)
}

/// Why no noise was calibrated to a target: below objective perturbation's
/// floor, too strict for the largest noise of the calibrated range, or so
/// loose that its smallest noise meets it.
fn unreachable(arg: &'static str, level: f64, q: &Query, mech: &Mechanism, zcdp: bool) -> Argument {
    let floor = mech.floor(zcdp);
    // subsampled DP-SGD to (ε, δ): the certified search over its noise multipliers
    let certified = !zcdp && q.algorithm == AlgorithmKind::Dpsgd && q.sample_rate < 1.0;
    let (range, largest, smallest) = if certified {
        let (lo, hi) = Knob::NoiseMultiplier.limits();
        let s = mech.dpsgd_sensitivity(q.clip);
        (format!("noise multiplier in [{lo:e}, {hi:e}]"), hi * s, lo * s)
    } else {
        ("noise in [e^-200, e^40]".to_string(), 40f64.exp(), (-200f64).exp())
    };
    let strict = if zcdp {
        mech.rho(largest) > level
    } else {
        epsilon(
            &mech.event(largest),
            q.delta_priv,
            q.neighbouring,
            BracketSettings::default(),
        )
        .ok()
        .flatten()
        .is_none_or(|b| b.upper > level)
    };
    if level <= floor {
        Argument::new(
            arg,
            format!(
                " = {level:?} is unreachable: objective perturbation cannot go below {floor:.4} \
                 (log(1 + βR²/λ) per neighbour) whatever the noise; raise λ or the target, or let extra_ridge \
                 = auto (the default) add the ridge that halves the floor"
            ),
        )
    } else if strict {
        Argument::new(
            arg,
            format!(
                " = {level:?} is too strict: even the largest {range}, {largest:e}, does not meet it \
                 (at δ = {:?}); no noise is calibrated",
                q.delta_priv
            ),
        )
    } else {
        Argument::new(
            arg,
            format!(
                " = {level:?} is so loose that every {range} meets it, down to {smallest:e}: no smallest \
                 noise exists to calibrate"
            ),
        )
    }
}
