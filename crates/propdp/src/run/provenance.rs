//! What produced a result: the config (text and SHA-256), the crate version
//! and the git commit of the build. Every results directory holds a
//! [`Manifest`]; every record carries a [`Provenance`].

use propdp_core::record::Provenance;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Provenance of a whole run, written once as `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The config file as given on the command line (or a label).
    pub config_path: String,
    /// SHA-256 of `config_text`, hex.
    pub config_sha256: String,
    /// The config, verbatim.
    pub config_text: String,
    /// Version of the propdp crates.
    pub crate_version: String,
    /// Git commit of the build (`-dirty` with uncommitted changes).
    pub git_commit: String,
    /// Units of work of the run (sweep points; tune cells).
    pub points: usize,
    /// SHA-256 of the `problem.covariance` file the run read, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covariance_sha256: Option<String>,
    /// SHA-256 of the `[simulation] data` file the run read, hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_sha256: Option<String>,
    /// The shard K/N this run computed (`propdp run --shard`); none for a whole run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<super::shard::Shard>,
}

impl Manifest {
    /// The manifest of a config text run by this build.
    ///
    /// ```
    /// let m = propdp::provenance::Manifest::new("a.toml", "x = 1\n", 3);
    /// assert_eq!(m.config_sha256.len(), 64);
    /// assert_eq!(m.crate_version, env!("CARGO_PKG_VERSION"));
    /// ```
    pub fn new(config_path: &str, config_text: &str, points: usize) -> Manifest {
        Manifest {
            config_path: config_path.to_string(),
            config_sha256: sha256_hex(config_text),
            config_text: config_text.to_string(),
            crate_version: CRATE_VERSION.to_string(),
            git_commit: GIT_COMMIT.to_string(),
            points,
            covariance_sha256: None,
            data_sha256: None,
            shard: None,
        }
    }

    /// The manifest of a validated config run by this build: with its
    /// covariance file's SHA-256, when it read one.
    pub fn of(config_path: &str, cfg: &propdp_core::Config, points: usize) -> Manifest {
        Manifest {
            covariance_sha256: cfg.covariance.as_ref().and_then(|c| c.sha256()).map(String::from),
            data_sha256: cfg.data.as_ref().map(|d| d.sha256.clone()),
            ..Manifest::new(config_path, &cfg.text, points)
        }
    }

    /// The provenance every record of this run carries.
    pub fn provenance(&self) -> Provenance {
        Provenance {
            config_sha256: self.config_sha256.clone(),
            crate_version: self.crate_version.clone(),
            git_commit: self.git_commit.clone(),
            covariance_sha256: self.covariance_sha256.clone(),
            data_sha256: self.data_sha256.clone(),
        }
    }
}

/// Version of the propdp crates.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Git commit of this build, "unknown" outside a checkout.
pub const GIT_COMMIT: &str = env!("PROPDP_GIT_COMMIT");

/// SHA-256 of a text, hex.
///
/// ```
/// assert_eq!(
///     propdp::provenance::sha256_hex(""),
///     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// ```
pub fn sha256_hex(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(64);
    for b in Sha256::digest(text.as_bytes()) {
        hex.push(HEX[usize::from(b >> 4)] as char);
        hex.push(HEX[usize::from(b & 15)] as char);
    }
    hex
}

/// The provenance of records computed from a validated config by this
/// build, with its covariance file's SHA-256 (what [`Manifest::of`]'s
/// provenance is, without a manifest).
pub fn provenance_of_config(cfg: &propdp_core::Config) -> Provenance {
    Provenance {
        covariance_sha256: cfg.covariance.as_ref().and_then(|c| c.sha256()).map(String::from),
        data_sha256: cfg.data.as_ref().map(|d| d.sha256.clone()),
        ..provenance_of(&cfg.text)
    }
}

/// The provenance of records computed from `config_text` by this build
/// (what [`Manifest::provenance`] gives, without a manifest).
pub fn provenance_of(config_text: &str) -> Provenance {
    Provenance {
        config_sha256: sha256_hex(config_text),
        crate_version: CRATE_VERSION.to_string(),
        git_commit: GIT_COMMIT.to_string(),
        covariance_sha256: None,
        data_sha256: None,
    }
}
