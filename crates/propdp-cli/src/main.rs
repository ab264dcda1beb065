//! `propdp`: run TOML-configured sweeps of the proportional-regime theory of
//! DP learners and write machine-readable results.

mod output;
mod plot;
mod privacy;
mod run;
mod tune;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

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
    },
    /// Run what is missing, then compare theory with simulation by SPEC.md §5's
    /// rule; writes DIR/validation.csv; non-zero exit on any failure.
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
    },
    /// Privacy guarantee of a noise level in every notion, or the noise
    /// calibrated to a target (ε, δ) (SPEC.md §4).
    Privacy(privacy::PrivacyArgs),
    /// For each algorithm, problem point and privacy budget of a [tune]
    /// config: the hyperparameters (λ; for DP-GD also η, T) minimising the
    /// predicted metric with calibrated noise; writes DIR/tune.jsonl, frontier
    /// figures and the (δ, budget) winner maps. The config has [problem] and
    /// [tune] tables, and optionally [simulation] to simulate every optimum.
    Tune {
        #[command(flatten)]
        job: Job,
    },
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
        } => run::run(
            &job.config,
            job.out,
            job.resume,
            job.overwrite,
            run::Sources {
                theory: !sim_only,
                simulation: !theory_only,
            },
        ),
        Command::Validate { config, out } => validate::validate(&config, out),
        Command::Check { config } => run::check(&config),
        Command::Plot { results, out } => plot::command(&results, out),
        Command::Privacy(args) => privacy::command(&args),
        Command::Tune { job } => tune::command(&job.config, job.out, job.resume, job.overwrite),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
