//! Reading result records (JSON lines) with line-numbered errors.

use std::path::Path;

use propdp_core::record::Record;

use crate::PlotError;

/// All records of a results file; an empty file or a malformed line is an error.
pub fn load(path: &Path) -> Result<Vec<Record>, PlotError> {
    let records = Record::read_file(path)?;
    if records.is_empty() {
        return Err(PlotError::Empty(path.display().to_string()));
    }
    Ok(records)
}
