//! `propdp`: the command line over the propdp library — argument parsing
//! and printing only; every capability is a library function
//! (`propdp::run`, `propdp::validate`, `propdp::tune`, `propdp::privacy`,
//! `propdp::figures`).

/// mimalloc for small blocks, the system allocator for large ones
/// (`propdp::allocator`).
#[global_allocator]
static ALLOCATOR: propdp::allocator::Allocator = propdp::allocator::Allocator;

mod bar;
mod infer;
mod privacy;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use propdp::Result;
use propdp::run::{Sources, default_dir, load};
use propdp::rundir::Existing;

use bar::Bar;
use infer::InferArgs;
use privacy::PrivacyArgs;

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
        /// The long-horizon theory's target relative standard error at the
        /// last step (`solver.precision`, recorded in the run's config;
        /// 1e-4 to 0.2; default 0.02): its paths follow from a pilot solve.
        #[arg(long)]
        precision: Option<f64>,
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
    /// Which noise for a DP-SGD problem: DP-SGD against BandMF in cyclic
    /// groups (prefix-sum-optimal coefficients, and coefficients optimised
    /// for the predicted metric) and a BLT in the fixed order (optimised for
    /// it), each σ calibrated to (ε, δ), ranked by the predicted metric at
    /// step T (docs/correlated_noise.md).
    Mechanism {
        /// A config with one DP-SGD point: [problem] and [algorithm]
        /// (lambda, eta, steps, clip, sample_rate = the expected batch
        /// fraction, and a sigma or budget, which the calibration replaces).
        config: PathBuf,
        /// The budget's ε.
        #[arg(long, allow_hyphen_values = true)]
        epsilon: f64,
        /// The budget's δ.
        #[arg(long, default_value_t = 1e-6, allow_hyphen_values = true)]
        delta_priv: f64,
        /// The metric compared [default: est_err2 for regression, test_class_err for logistic].
        #[arg(long)]
        metric: Option<String>,
        /// Print the choice as one JSON object.
        #[arg(long)]
        json: bool,
    },
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
    /// labels if named (in units of their sd), and with --model the
    /// effective model's s2 and its checks (docs/covariance.md). Computed
    /// without privacy: for planning, not for publishing.
    Spectrum {
        /// The data: a CSV file with a header row of column names, or a 2-D
        /// float64 .npy array (columns x0, x1, …).
        data: PathBuf,
        /// The column holding the labels (excluded from the features):
        /// regression labels, or two classes with --model logistic.
        #[arg(long)]
        label: Option<String>,
        /// A column that is neither a feature nor the label (e.g. a class
        /// column); repeat for several.
        #[arg(long, value_name = "COLUMN")]
        drop: Vec<String>,
        /// Divide every column by its standard deviation after centring
        /// (always done with --model).
        #[arg(long)]
        standardize: bool,
        /// Estimate the effective model of the labels: s² (and the noise)
        /// for which this model of the spectrum predicts the cross-fitted
        /// error of a non-private fit, and check it (docs/covariance.md);
        /// logistic labels take two values, the larger read as +1.
        #[arg(long, value_enum)]
        model: Option<SpectrumModel>,
        /// The Huber threshold of --model huber, in units of sd(y).
        #[arg(long, value_name = "M", default_value_t = 1.0)]
        huber_m: f64,
        /// How --model logistic models the rows and labels: a logistic link
        /// of a Gaussian teacher field, two Gaussian clusters (near-separable
        /// or unbalanced classes), or auto (the teacher if it describes the
        /// data, else two clusters if they do; docs/covariance.md).
        #[arg(long, value_enum, default_value_t = SpectrumData::Auto)]
        data_model: SpectrumData,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            job,
            theory_only,
            sim_only,
            shard,
            quiet,
            precision,
        } => run(
            &job,
            Sources {
                theory: !sim_only,
                simulation: !theory_only,
            },
            shard,
            quiet,
            precision,
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
        Command::Check { config } if is_tune(&config) => propdp::core::input::read_regular_text(&config)
            .map_err(|e| propdp::Error::from(e).context(format!("reading {}", config.display())))
            .and_then(|text| propdp::tune::estimate(&text, &config.display().to_string(), None))
            .map(|e| {
                println!("{}: a valid tune config", config.display());
                println!("{}", e.text());
                ExitCode::SUCCESS
            }),
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
                return Err(propdp::Error::compute(why.to_string()));
            }
            for f in drawn.files {
                println!("wrote {}", f.display());
            }
            Ok(ExitCode::SUCCESS)
        }),
        Command::Privacy(args) => privacy::privacy(&args),
        Command::Mechanism {
            config,
            epsilon,
            delta_priv,
            metric,
            json,
        } => mechanism(&config, epsilon, delta_priv, metric.as_deref(), json),
        Command::Tune { job, shard } => tune(&job, shard),
        Command::Infer(a) => infer::infer(&a),
        Command::Spectrum {
            data,
            label,
            drop,
            standardize,
            model,
            huber_m,
            data_model,
            out,
        } => spectrum_model(model, huber_m, data_model)
            .and_then(|model| propdp::data_spectrum::from_file(&data, label.as_deref(), &drop, standardize, model))
            .and_then(|s| {
                let text = s.to_csv(&data.display().to_string());
                match out {
                    Some(out) => {
                        propdp::data_spectrum::write_new(&out, &text)?;
                        eprintln!("wrote {} ({} atoms)", out.display(), s.eigenvalues.len());
                        // the suggestion for the config, on the terminal too
                        if let Some(f) = &s.labels {
                            eprintln!(
                                "labels {:?} (centred, divided by their sd {:e}): R² = {:.4} of the linear fit; in a \
                                 config: s2 = {:e}, noise = {{ law = \"gaussian\", sd = {:e} }}",
                                label.as_deref().unwrap_or_default(),
                                f.label_sd,
                                f.r2,
                                f.s2,
                                f.noise_sd
                            );
                        }
                        for line in s.summary() {
                            eprintln!("{line}");
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

fn run(
    job: &Job,
    sources: Sources,
    shard: Option<propdp::shard::Shard>,
    quiet: bool,
    precision: Option<f64>,
) -> Result<ExitCode> {
    let cfg = match precision {
        Some(p) => propdp::run::load_at_precision(&job.config, p)?,
        None => load(&job.config)?,
    };
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
    use propdp::core::validation::Verdict;
    let (failed, finite_d) = (v.failed(), v.count(Verdict::FiniteD));
    println!(
        "{} of {} comparisons pass (|z| ≤ 3); {finite_d} finite-d (|z| > 3, but |theory − sim| ≤ 3·stderr + \
         C·max(|theory|, 0.1)/d, the O(1/d) bias measured for the metric's family: not verified at this d); \
         {failed} fail",
        v.count(Verdict::Pass),
        v.rows.len()
    );
    Ok(if failed > 0 || computed != ExitCode::SUCCESS {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `propdp tune`.
/// `propdp mechanism`: the cost estimate, then the candidates with a progress bar.
fn mechanism(config: &Path, epsilon: f64, delta_priv: f64, metric: Option<&str>, json: bool) -> Result<ExitCode> {
    let text = propdp::core::input::read_regular_text(config)
        .map_err(|e| propdp::Error::from(e).context(format!("reading {}", config.display())))?;
    let cfg = propdp::mechanism::load(&text, config.parent(), epsilon, delta_priv)
        .map_err(|e| e.context(format!("in config {}", config.display())))?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    eprintln!(
        "{} candidates and the searches of the coefficients: about {:.0} s ({} solves)",
        config.display(),
        propdp::mechanism::cost_seconds(&cfg) / cores,
        propdp::mechanism::planned_solves(&cfg)
    );
    let choice = propdp::mechanism::choose(&cfg, epsilon, delta_priv, metric, &Bar::default())?;
    if json {
        println!("{}", choice.json());
    } else {
        print!("{}", choice.text());
    }
    Ok(ExitCode::SUCCESS)
}

fn tune(job: &Job, shard: Option<propdp::shard::Shard>) -> Result<ExitCode> {
    let text = propdp::core::input::read_regular_text(&job.config)
        .map_err(|e| propdp::Error::from(e).context(format!("reading {}", job.config.display())))?;
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

/// `propdp spectrum --model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SpectrumModel {
    /// Two classes: logistic regression.
    Logistic,
    /// Huber regression (threshold --huber-m).
    Huber,
    /// Least-squares regression.
    #[value(name = "least_squares")]
    LeastSquares,
}

/// The data model of `propdp spectrum --model logistic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SpectrumData {
    /// The teacher if it describes the data, else two clusters if they do.
    Auto,
    /// A logistic link of a Gaussian teacher field.
    Teacher,
    /// Two Gaussian clusters.
    #[value(name = "two_cluster")]
    TwoCluster,
}

/// The model of `propdp spectrum --model` (the library checks `--huber-m`).
fn spectrum_model(
    model: Option<SpectrumModel>,
    huber_m: f64,
    data: SpectrumData,
) -> Result<Option<propdp::data_spectrum::ModelChoice>> {
    use propdp::data_spectrum::ModelChoice;
    use propdp::effective_model::DataModelChoice;
    let data = match data {
        SpectrumData::Auto => DataModelChoice::Auto,
        SpectrumData::Teacher => DataModelChoice::Teacher,
        SpectrumData::TwoCluster => DataModelChoice::TwoCluster,
    };
    Ok(model.map(|m| match m {
        SpectrumModel::Logistic => ModelChoice::Logistic { data },
        SpectrumModel::Huber => ModelChoice::Huber { m: huber_m },
        SpectrumModel::LeastSquares => ModelChoice::LeastSquares,
    }))
}
