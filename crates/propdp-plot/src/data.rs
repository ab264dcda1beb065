//! Reading result records (JSON lines) with line-numbered errors.

use std::path::Path;

use propdp_core::record::Record;

use crate::PlotError;

/// All records of a results file; an empty file or a malformed line is an error.
pub fn load(path: &Path) -> Result<Vec<Record>, PlotError> {
    let p = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| PlotError::Io {
        path: p.clone(),
        source,
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let r: Record = serde_json::from_str(line).map_err(|e| PlotError::Malformed {
            path: p.clone(),
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(r);
    }
    if out.is_empty() {
        return Err(PlotError::Empty(p));
    }
    Ok(out)
}
