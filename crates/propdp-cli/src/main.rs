//! `propdp`: the command line over the propdp library — argument parsing
//! and printing only; every capability is a library function
//! (`propdp::run`, `propdp::validate`, `propdp::tune`, `propdp::privacy`,
//! `propdp::figures`).

mod bar;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use propdp::Result;
use propdp::core::accountant::Neighbouring;
use propdp::core::accountant::calibrate::Knob;
use propdp::core::accountant::sampling::Sampling;
use propdp::core::{AlgorithmKind, ModelKind};
use propdp::privacy::{Query, QueryArgs};
use propdp::run::{Sources, default_dir, load};
use propdp::rundir::Existing;

use bar::Bar;

#[derive(Parser)]
#[command(name = "propdp", version, about = "Precise accuracy of DP learners when d/n → δ")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// A config run into an output directory that keeps finished work.
#[derive(Args)]
struct Job {
    /// The TOML config.
    config: PathBuf,
    /// Output directory [default: results/<config stem>/].
    #[arg(long)]
    out: Option<PathBuf>,
    /// Continue an interrupted run: keep what is finished, compute the rest.
    #[arg(long, conflicts_with = "overwrite")]
    resume: bool,
    /// Discard the results of an earlier run in DIR.
    #[arg(long)]
    overwrite: bool,
}

impl Job {
    fn dir(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| default_dir(&self.config))
    }

    fn existing(&self) -> Existing {
        match (self.resume, self.overwrite) {
            (true, _) => Existing::Resume,
            (_, true) => Existing::Overwrite,
            _ => Existing::Refuse,
        }
    }

    fn label(&self) -> String {
        self.config.display().to_string()
    }
}

#[derive(Subcommand)]
enum Command {
    /// Solve (and, with a [simulation] table, simulate) every point of a
    /// config's sweep; write DIR/results.jsonl.
    Run {
        #[command(flatten)]
        job: Job,
        /// Solve the theory only, even if the config has a [simulation] table.
        #[arg(long, conflicts_with = "sim_only")]
        theory_only: bool,
        /// Run the simulation only.
        #[arg(long)]
        sim_only: bool,
        /// Compute only shard K of N (0 ≤ K < N) of the config's units of
        /// work, e.g. --shard $SLURM_ARRAY_TASK_ID/16; combine the shards'
        /// directories with `propdp merge`.
        #[arg(long, value_name = "K/N")]
        shard: Option<propdp::shard::Shard>,
        /// Print no table of the computed numbers (only where they were written).
        #[arg(long)]
        quiet: bool,
    },
    /// Combine the directories of a sharded run (`propdp run --shard K/N`
    /// or `propdp tune --shard K/N`, every K of the same config and N) into
    /// the results a single run writes, and draw its figures; refuses
    /// missing, duplicated, unfinished or mismatched shards, and an output
    /// directory that holds results.
    Merge {
        /// The shards' output directories.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// Output directory (new, or without results.jsonl).
        #[arg(long)]
        out: PathBuf,
    },
    /// Run what is missing, then compare theory with simulation by the rule
    /// of docs/theory.md §5; writes DIR/validation.csv; non-zero exit on any failure.
    Validate {
        /// The TOML config (must have a [simulation] table).
        config: PathBuf,
        /// Output directory [default: results/<config stem>/].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Draw figures (PNG and SVG) of a results file: theory as lines,
    /// simulation as points with ±2 standard-error bars.
    Plot {
        /// A results.jsonl written by `propdp run`.
        results: PathBuf,
        /// Output directory [default: figures/ beside the results].
        #[arg(long)]
        out: Option<PathBuf>,
        /// The x axis: a parameter of the results (delta, lambda, epsilon, …), "d" or "t"
        /// [default: the config's [plot] x, else δ, else a swept knob].
        #[arg(long)]
        x: Option<String>,
        /// One curve per value of this parameter [default: the config's, else ε or the noise].
        #[arg(long)]
        series: Option<String>,
        /// The metrics, one panel each, comma-separated (est_err2,test_class_err).
        #[arg(long, value_delimiter = ',')]
        metrics: Option<Vec<String>>,
        /// A log-scaled y axis.
        #[arg(long)]
        y_log: bool,
    },
    /// Privacy guarantee of a noise level in every notion, or the noise
    /// calibrated to a target (ε, δ) or ρ (docs/theory.md §4).
    Privacy(PrivacyArgs),
    /// For each algorithm, problem point and privacy budget of a [tune]
    /// config: the hyperparameters (λ; for DP-GD also η, T) minimising the
    /// predicted metric with calibrated noise; writes DIR/tune.jsonl, frontier
    /// figures and the (δ, budget) winner maps. The config has [problem] and
    /// [tune] tables, and optionally [simulation] to simulate every optimum.
    Tune {
        #[command(flatten)]
        job: Job,
        /// Search only shard K of N (0 ≤ K < N) of the cells (problem point ×
        /// budget × algorithm), e.g. --shard $SLURM_ARRAY_TASK_ID/16; combine
        /// the shards' directories with `propdp merge`.
        #[arg(long, value_name = "K/N")]
        shard: Option<propdp::shard::Shard>,
    },
    /// The covariance spectrum of a data set (a CSV with a header row) as a
    /// `problem.covariance` file: eigenvalues of the centred columns'
    /// covariance, constant columns dropped; teacher energies from the
    /// regression labels if named (docs/covariance.md). Computed without
    /// privacy: for planning, not for publishing.
    Spectrum {
        /// The data: a CSV file with a header row of column names, or a 2-D
        /// float64 .npy array (columns x0, x1, …).
        data: PathBuf,
        /// The column holding regression labels (excluded from the features).
        #[arg(long)]
        label: Option<String>,
        /// A column that is neither a feature nor the label (e.g. a class
        /// column); repeat for several.
        #[arg(long, value_name = "COLUMN")]
        drop: Vec<String>,
        /// Divide every column by its standard deviation after centring.
        #[arg(long)]
        standardize: bool,
        /// Write the spectrum here (a new file) instead of standard output.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// A private fit of a logistic or Huber model to a data file with
    /// confidence intervals for its coefficients that hold when d/n is not
    /// small (docs/inference.md); writes DIR/intervals.csv and DIR/report.json.
    Infer(InferArgs),
    /// Validate a config and print its sweep without solving anything.
    Check {
        /// The TOML config.
        config: PathBuf,
    },
}

/// Arguments of `propdp infer` (checks: `propdp::inference::Spec::check`).
#[derive(Debug, Args)]
struct InferArgs {
    /// The data: a CSV file with a header row, or a 2-D float64 .npy array
    /// (columns x0, x1, …); every column but the label is a feature.
    data: PathBuf,
    /// The label column (logistic: ±1 or 0/1).
    #[arg(long)]
    label: String,
    /// logistic | huber
    #[arg(long)]
    model: String,
    /// objective | output | dpsgd
    #[arg(long, default_value = "objective")]
    algorithm: String,
    /// DP-SGD: steps T [algorithm dpsgd].
    #[arg(long)]
    steps: Option<usize>,
    /// DP-SGD: step size η on the summed gradient [algorithm dpsgd].
    #[arg(long, allow_hyphen_values = true)]
    eta: Option<f64>,
    /// DP-SGD: Poisson sample rate q (1: full-batch DP-GD) [algorithm dpsgd; default 1].
    #[arg(long, allow_hyphen_values = true)]
    sample_rate: Option<f64>,
    /// DP-SGD: per-example clipping norm C [algorithm dpsgd; default none: L·row_norm bounds the gradient].
    #[arg(long, allow_hyphen_values = true)]
    clip: Option<f64>,
    /// Ridge λ.
    #[arg(long = "lambda", allow_hyphen_values = true)]
    lambda: f64,
    /// The budget ε of everything released.
    #[arg(long, allow_hyphen_values = true)]
    epsilon: f64,
    /// The budget's δ.
    #[arg(long, default_value_t = 1e-6, allow_hyphen_values = true)]
    delta_priv: f64,
    /// replace-one | add-remove-one
    #[arg(long, default_value = "replace-one", value_parser = parse_neighbouring)]
    neighbouring: Neighbouring,
    /// Rows with ‖x‖ above it are projected onto the ball (the mechanism's sensitivity needs the bound).
    #[arg(long, allow_hyphen_values = true)]
    row_norm: f64,
    /// Huber threshold M [model huber].
    #[arg(long, default_value_t = 1.0, allow_hyphen_values = true)]
    huber_m: f64,
    /// The label noise's law if known [model huber], as JSON in the config's
    /// spelling, e.g. '{"law": "student_t", "dof": 3, "scale": 0.5}'.
    #[arg(long)]
    noise: Option<String>,
    /// A public feature covariance Σ (d × d, .npy or CSV with a header row): the rows are whitened by it.
    #[arg(long)]
    covariance: Option<PathBuf>,
    /// The share of the rows held out of the fit, on which θ̂'s test error is released (0: none).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    holdout: f64,
    /// The clip B of the held-out squared error [model huber; default (3M)²].
    #[arg(long, allow_hyphen_values = true)]
    test_clip: Option<f64>,
    /// The intervals' level.
    #[arg(long, default_value_t = 0.95, allow_hyphen_values = true)]
    level: f64,
    /// Seed of the privacy noise [default: fresh randomness, recorded in the report].
    #[arg(long)]
    seed: Option<u64>,
    /// Output directory (intervals.csv and report.json must not exist in it).
    #[arg(long)]
    out: PathBuf,
}

/// `propdp infer`.
fn infer(a: &InferArgs) -> propdp::Result<ExitCode> {
    use propdp::inference::{Descent, Glm, Release, Spec};
    let bad = |arg: &str, v: &str, allowed: &str| -> propdp::Error {
        anyhow::anyhow!("--{arg} {v:?} is invalid: allowed {allowed}").into()
    };
    let model = match a.model.as_str() {
        "logistic" => Glm::Logistic,
        "huber" => Glm::Huber { m: a.huber_m },
        v => return Err(bad("model", v, "logistic, huber")),
    };
    let release = match a.algorithm.as_str() {
        "objective" => Release::Objective,
        "output" => Release::Output,
        "dpsgd" => Release::Dpsgd,
        v => return Err(bad("algorithm", v, "objective, output, dpsgd")),
    };
    let descent = match (release, a.steps, a.eta) {
        (Release::Dpsgd, Some(steps), Some(eta)) => Some(Descent {
            steps,
            eta,
            sample_rate: a.sample_rate.unwrap_or(1.0),
            clip: a.clip,
        }),
        (Release::Dpsgd, _, _) => {
            return Err(anyhow::anyhow!("--algorithm dpsgd needs --steps and --eta").into());
        }
        _ if a.steps.is_some() || a.eta.is_some() || a.sample_rate.is_some() || a.clip.is_some() => {
            return Err(
                anyhow::anyhow!("--steps, --eta, --sample-rate and --clip apply to --algorithm dpsgd only").into(),
            );
        }
        _ => None,
    };
    if !(a.level > 0.0 && a.level < 1.0) {
        return Err(bad("level", &a.level.to_string(), "0 < level < 1"));
    }
    let spec = Spec {
        model,
        release,
        lambda: a.lambda,
        epsilon: a.epsilon,
        delta_priv: a.delta_priv,
        neighbouring: a.neighbouring,
        row_norm: a.row_norm,
        holdout: a.holdout,
        test_clip: a.test_clip,
        descent,
        noise: match &a.noise {
            None => None,
            Some(text) => Some(
                serde_json::from_str(text).map_err(|e| anyhow::anyhow!("--noise {text:?} is not a noise law ({e})"))?,
            ),
        },
    };
    let fit = propdp::inference::fit_file(&a.data, &a.label, &spec, a.seed, a.covariance.as_deref())?;
    fit.write(&a.out, 1.0 - a.level)?;
    print!("{}", fit.text());
    eprintln!(
        "wrote {} and {}",
        a.out.join("intervals.csv").display(),
        a.out.join("report.json").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Arguments of `propdp privacy` (defaults and checks: `propdp::privacy::QueryArgs`).
#[derive(Debug, Args)]
struct PrivacyArgs {
    /// objective | output | dpgd | dpsgd
    #[arg(long)]
    algorithm: AlgorithmKind,
    /// huber | logistic | least_squares
    #[arg(long)]
    model: ModelKind,
    /// Huber threshold M, the Huber loss's Lipschitz constant [model huber only; default 1].
    #[arg(long, allow_hyphen_values = true)]
    huber_m: Option<f64>,
    /// Ridge λ [objective and output perturbation only; default 1].
    #[arg(long, allow_hyphen_values = true)]
    lambda: Option<f64>,
    /// The noise: σ (objective, DP-GD, DP-SGD) or τ (output). Omit to calibrate it to --epsilon or --rho.
    #[arg(long, allow_hyphen_values = true)]
    noise: Option<f64>,
    /// Steps T [DP-GD and DP-SGD only; default 1].
    #[arg(long)]
    steps: Option<u64>,
    /// DP-SGD's Poisson sample rate q, 0 < q ≤ 1 [DP-SGD only, required there].
    #[arg(long, allow_hyphen_values = true)]
    sample_rate: Option<f64>,
    /// DP-SGD's per-example clipping norm C (default: none; the loss's Lipschitz constant bounds the gradient).
    #[arg(long, allow_hyphen_values = true)]
    clip: Option<f64>,
    /// Print the report as one JSON object (for scripts).
    #[arg(long)]
    json: bool,
    /// replace-one | add-remove-one (or replace_one | add_remove_one)
    #[arg(long, default_value = "replace-one", value_parser = parse_neighbouring)]
    neighbouring: Neighbouring,
    /// Target ε (with --delta-priv) for calibration.
    #[arg(long, allow_hyphen_values = true)]
    epsilon: Option<f64>,
    /// δ of the (ε, δ) guarantee [default 1e-6].
    #[arg(long, allow_hyphen_values = true)]
    delta_priv: Option<f64>,
    /// Target zCDP ρ for calibration (instead of --epsilon).
    #[arg(long, allow_hyphen_values = true)]
    rho: Option<f64>,
    /// A DP-SGD schedule: a TOML file of [[segment]] tables with noise, sample_rate, steps and optional clip,
    /// and [[objective]] tables (lambda, noise) for models released by objective perturbation
    /// (instead of --noise/--sample-rate/--steps/--clip; its certified ε at --delta-priv; nothing is
    /// calibrated, so not with --calibrate).
    #[arg(
        long,
        conflicts_with_all = ["noise", "epsilon", "rho", "steps", "sample_rate", "clip", "lambda", "calibrate"]
    )]
    schedule: Option<PathBuf>,
    /// What --epsilon or --rho calibrates: noise (default), or DP-SGD's steps or sample-rate (give the noise and
    /// the other one); on the certified ε, never above the target.
    #[arg(long, value_parser = parse_knob)]
    calibrate: Option<Knob>,
    /// DP-SGD's batches: poisson (default), fixed-size (b of n without replacement; replace-one) or shuffled
    /// (no amplification, the Poisson figure beside it); with --noise, or with --schedule for every segment.
    #[arg(long, value_parser = parse_sampling, conflicts_with_all = ["calibrate"])]
    sampling: Option<Sampling>,
    /// Also print what the guarantee means for membership inference: the largest TPR any attack reaches at
    /// FPR 1e-5 … 0.1, and μ-GDP (exact for the Gaussian mechanisms, the central-limit approximation for DP-SGD).
    #[arg(long, conflicts_with_all = ["schedule", "sampling"])]
    membership_inference: bool,
}

fn parse_sampling(s: &str) -> std::result::Result<Sampling, String> {
    Sampling::parse(s).ok_or_else(|| format!("{s:?}: allowed poisson, fixed-size, shuffled"))
}

fn parse_knob(s: &str) -> std::result::Result<Knob, String> {
    Knob::parse(s).ok_or_else(|| format!("{s:?}: allowed noise, steps, sample-rate"))
}

/// `propdp privacy --schedule FILE`: the certified ε of a DP-SGD schedule.
fn privacy_schedule(args: &PrivacyArgs) -> Result<ExitCode> {
    let path = args.schedule.as_deref().expect("called with a schedule");
    if args.algorithm != AlgorithmKind::Dpsgd {
        return Err(anyhow::anyhow!(
            "--schedule is a DP-SGD schedule: give --algorithm dpsgd (not {})",
            args.algorithm.name()
        )
        .into());
    }
    let mut q = QueryArgs::new(args.algorithm, args.model);
    q.huber_m = args.huber_m;
    // the model's loss constants, checked as for any query (a placeholder rate, noise and clip:
    // each segment's own clip is checked by the schedule, naming it — a least-squares schedule
    // is private when every segment clips)
    q.sample_rate = Some(1.0);
    q.noise = Some(1.0);
    q.clip = Some(1.0);
    let model = q.query()?.model;
    let report = propdp::schedule::assess_file(
        path,
        &model,
        args.neighbouring,
        args.sampling.unwrap_or(Sampling::Poisson),
        args.delta_priv.unwrap_or(1e-6),
    )?;
    if args.json {
        println!("{}", report.json());
    } else {
        print!("{}", report.text());
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_neighbouring(s: &str) -> Result<Neighbouring, String> {
    match s {
        "replace-one" | "replace_one" => Ok(Neighbouring::ReplaceOne),
        "add-remove-one" | "add_remove_one" => Ok(Neighbouring::AddRemoveOne),
        _ => Err(format!("{s:?}: allowed replace-one, add-remove-one")),
    }
}

impl PrivacyArgs {
    fn query(&self) -> Result<Query> {
        Ok(self.query_args().query()?)
    }

    fn query_args(&self) -> QueryArgs {
        QueryArgs {
            huber_m: self.huber_m,
            lambda: self.lambda,
            steps: self.steps,
            sample_rate: self.sample_rate,
            clip: self.clip,
            neighbouring: self.neighbouring,
            delta_priv: self.delta_priv,
            noise: self.noise,
            epsilon: self.epsilon,
            rho: self.rho,
            ..QueryArgs::new(self.algorithm, self.model)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            job,
            theory_only,
            sim_only,
            shard,
            quiet,
        } => run(
            &job,
            Sources {
                theory: !sim_only,
                simulation: !theory_only,
            },
            shard,
            quiet,
        ),
        Command::Merge { shards, out } if shards[0].join("tune.jsonl").exists() => {
            propdp::tune::merge(&out, &shards, &Bar::default()).map(|o| report_tune(&o))
        }
        Command::Merge { shards, out } => propdp::merge::merge(&out, &shards).map(|m| {
            println!(
                "merged {} shards: {} records, {} failed → {}",
                shards.len(),
                m.records,
                m.failed,
                out.join("results.jsonl").display()
            );
            let figures_ok = draw_figures(&out.join("results.jsonl"));
            exit_code(figures_ok, m.failed, &out)
        }),
        Command::Validate { config, out } => validate(&config, out),
        Command::Check { config } if is_tune(&config) => {
            propdp::core::input::read_regular_text(&config)
                .map_err(|e| anyhow::anyhow!("reading {}: {e}", config.display()).into())
                .and_then(|text| propdp::tune::estimate(&text, &config.display().to_string(), None))
                .map(|e| {
                    println!("{}: a valid tune config", config.display());
                    println!("{}", e.text());
                    ExitCode::SUCCESS
                })
        }
        Command::Check { config } => load(&config).and_then(|cfg| {
            propdp::run::check(&cfg)?;
            warn_step_sizes(&cfg);
            print!("{}", propdp::run::describe(&config.display().to_string(), &cfg));
            Ok(ExitCode::SUCCESS)
        }),
        Command::Plot {
            results,
            out,
            x,
            series,
            metrics,
            y_log,
        } => {
            let layout = propdp::figures::Layout {
                x,
                series,
                metrics,
                y_log: y_log.then_some(true),
            };
            propdp::figures::draw_as(&results, out, &layout)
        }
        .and_then(|drawn| {
            if let Some(why) = drawn.skipped {
                return Err(anyhow::anyhow!("{why}").into());
            }
            for f in drawn.files {
                println!("wrote {}", f.display());
            }
            Ok(ExitCode::SUCCESS)
        }),
        Command::Privacy(args) if args.schedule.is_some() => privacy_schedule(&args),
        Command::Privacy(args) if args.sampling.is_some_and(|s| s != Sampling::Poisson) => {
            let sampling = args.sampling.expect("checked");
            propdp::privacy::assess_sampled(&args.query_args(), sampling).map(|r| {
                if args.json {
                    println!("{}", r.json());
                } else {
                    print!("{}", r.text());
                }
                ExitCode::SUCCESS
            })
        }
        Command::Privacy(args) => match args.calibrate {
            Some(knob) => propdp::privacy::calibrate_knob(&args.query_args(), knob),
            None => args.query().and_then(|q| propdp::privacy::assess(&q)),
        }
        .and_then(|r| {
            let membership = args
                .membership_inference
                .then(|| propdp::privacy::membership(&r))
                .transpose()?;
            if args.json {
                let mut j = r.json();
                if let Some(m) = &membership {
                    j["membership_inference"] = m.json();
                }
                println!("{j}");
            } else {
                print!("{}", r.text());
                if let Some(m) = &membership {
                    print!("{}", m.text());
                }
            }
            Ok(ExitCode::SUCCESS)
        }),
        Command::Tune { job, shard } => tune(&job, shard),
        Command::Infer(a) => infer(&a),
        Command::Spectrum {
            data,
            label,
            drop,
            standardize,
            out,
        } => propdp::data_spectrum::from_file(&data, label.as_deref(), &drop, standardize).and_then(|s| {
            let text = s.to_csv(&data.display().to_string());
            match out {
                Some(out) => {
                    propdp::data_spectrum::write_new(&out, &text)?;
                    eprintln!("wrote {} ({} atoms)", out.display(), s.eigenvalues.len());
                    // the suggestion for the config, on the terminal too
                    if let Some(f) = &s.labels {
                        eprintln!(
                            "labels {:?}: R² = {:.4} of the linear fit; in a config: s2 = {:e}, noise = {{ law = \"gaussian\", sd = {:e} }}",
                            label.as_deref().unwrap_or_default(),
                            f.r2,
                            f.s2,
                            f.noise_sd
                        );
                    }
                }
                None => print!("{text}"),
            }
            Ok(ExitCode::SUCCESS)
        }),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `propdp run`.
/// Warn (stderr) about accepted DP-SGD step sizes that may oscillate, the
/// first three distinct ones and how many points have one.
fn warn_step_sizes(cfg: &propdp::core::Config) {
    let warnings = cfg.step_size_warnings();
    let mut distinct = warnings.clone();
    distinct.dedup();
    for w in distinct.iter().take(3) {
        eprintln!("warning: {w}");
    }
    if warnings.len() > 3 {
        eprintln!("warning: {} points have a step size that may oscillate", warnings.len());
    }
}

fn run(job: &Job, sources: Sources, shard: Option<propdp::shard::Shard>, quiet: bool) -> Result<ExitCode> {
    let cfg = load(&job.config)?;
    warn_step_sizes(&cfg);
    if sources.theory {
        let seconds = propdp::shard::theory_seconds(&propdp::shard::owned(&cfg, shard));
        if seconds > 60.0 {
            eprintln!(
                "estimate: the theory takes about {:.0} minutes of one core on this machine (state evolutions: O(paths·T²) \
                 in full memory, O(paths·T) at long horizons, more with a spectrum); it can be interrupted and \
                 resumed (--resume)",
                seconds / 60.0
            );
        }
    }
    let s = propdp::run::run_shard(
        &cfg,
        &job.label(),
        &job.dir(),
        job.existing(),
        sources,
        shard,
        &Bar::default(),
    )?;
    if !quiet {
        print!("{}", propdp::summary::table(&s.results(), 40, 3)?);
    }
    println!(
        "{}: {} records written, {} already done, {} failed → {}",
        job.config.display(),
        s.written,
        s.skipped,
        s.failed,
        s.results().display()
    );
    // a shard holds a scattered subset of the points (and blocks of
    // repetitions): its figures come with `propdp merge`
    let figures_ok = shard.is_some() || draw_figures(&s.results());
    Ok(exit_code(figures_ok, s.failed, &s.dir))
}

/// Draw the figures at the end of a run; false when they could not be drawn.
fn draw_figures(results: &Path) -> bool {
    if !results.metadata().is_ok_and(|m| m.len() > 0) {
        return true;
    }
    match propdp::figures::draw(results, None) {
        Ok(drawn) => {
            if let Some(dir) = drawn.files.first().and_then(|f| f.parent()) {
                println!("figures: {}", dir.display());
            }
            if let Some(why) = drawn.skipped {
                println!("no figures: {why}");
            }
            true
        }
        Err(e) => {
            eprintln!("error: drawing figures: {e:#} (results are kept)");
            false
        }
    }
}

fn exit_code(figures_ok: bool, failed: usize, dir: &Path) -> ExitCode {
    if !figures_ok {
        return ExitCode::FAILURE;
    }
    if failed > 0 {
        eprintln!(
            "{failed} points failed (no solution, no convergence, or a failed fit); see {}",
            dir.join("errors.jsonl").display()
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// `propdp validate`.
fn validate(config: &Path, out: Option<PathBuf>) -> Result<ExitCode> {
    let cfg = load(config)?;
    let dir = out.unwrap_or_else(|| default_dir(config));
    let v = propdp::validate::validate(&cfg, &config.display().to_string(), &dir, &Bar::default())?;
    let s = &v.run;
    println!(
        "{}: {} records written, {} already done, {} failed → {}",
        config.display(),
        s.written,
        s.skipped,
        s.failed,
        s.results().display()
    );
    let figures_ok = draw_figures(&s.results());
    let computed = exit_code(figures_ok, s.failed, &s.dir);
    print!("{}", propdp::validate::table(&v.rows));
    if let Some(t) = propdp::validate::finite_size_table(&v.rows) {
        print!("\n{t}");
    }
    let failed = v.failed();
    println!(
        "{} of {} comparisons pass (|theory − sim| ≤ 3·stderr + 0.5·max(|theory|, 0.1)/√d)",
        v.rows.len() - failed,
        v.rows.len()
    );
    Ok(if failed > 0 || computed != ExitCode::SUCCESS {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `propdp tune`.
fn tune(job: &Job, shard: Option<propdp::shard::Shard>) -> Result<ExitCode> {
    let text = propdp::core::input::read_regular_text(&job.config)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", job.config.display()))?;
    let (label, dir, existing, bar) = (job.label(), job.dir(), job.existing(), Bar::default());
    eprintln!("{}", propdp::tune::estimate(&text, &label, shard)?.text());
    let o = match shard {
        Some(s) => propdp::tune::tune_shard(&text, &label, &dir, existing, s, &bar)?,
        None => propdp::tune::tune(&text, &label, &dir, existing, &bar)?,
    };
    Ok(report_tune(&o))
}

/// Print what a search found, where it wrote it and the figures it drew
/// (their names: frontiers, winner maps, DP-SGD's error against q).
fn report_tune(o: &propdp::tune::TuneOutcome) -> ExitCode {
    print!("{}", o.table());
    println!("→ {}", o.file().display());
    let names: Vec<String> = o
        .figures
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "png"))
        .filter_map(|f| f.file_stem().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if !names.is_empty() {
        println!(
            "figures in {} (png and svg): {}",
            o.dir.join("figures").display(),
            names.join(", ")
        );
    }
    ExitCode::SUCCESS
}

/// Whether `config` is a tune config ([`propdp::tune::is_tune_config`]); a
/// file that cannot be read is left to the run config's checks, which name
/// what is wrong.
fn is_tune(config: &std::path::Path) -> bool {
    propdp::core::input::read_regular_text(config).is_ok_and(|t| propdp::tune::is_tune_config(&t))
}
