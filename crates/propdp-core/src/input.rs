//! Reading a user's input file (config, data, covariance, schedule): only a
//! regular file, of a size this machine can hold, is read.
//!
//! A FIFO would block the reader until some other process writes to it
//! (forever, if none does), and a character device such as `/dev/zero`
//! never ends: both are refused before they are opened, from the file's
//! metadata (which follows symbolic links, so a link to a regular file is
//! read). A regular file larger than a quarter of the machine's memory is
//! refused before it is read (parsing holds it several times over).

use std::path::Path;

/// The bytes of the regular file at `path`; an error (without the path:
/// callers name the field or argument) for anything else, of kind
/// `InvalidInput` for a file that is not regular or too large.
///
/// ```
/// let e = propdp_core::input::read_regular(std::path::Path::new("/dev/zero")).unwrap_err();
/// assert!(e.to_string().contains("not a regular file"), "{e}");
/// ```
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let refuse = |why: String| Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, why));
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return refuse(format!(
            "not a regular file (a {}): give a file's path",
            kind(&meta.file_type())
        ));
    }
    let limit = machine_memory() / 4.0;
    if meta.len() as f64 > limit {
        return refuse(format!(
            "{:.1} GB, above a quarter of this machine's memory ({:.1} GB)",
            meta.len() as f64 / 1e9,
            limit / 1e9
        ));
    }
    std::fs::read(path)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_regular(path)?)
        .map(|t| without_bom(&t).to_string())
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not a UTF-8 text file"))
}

/// `text` without a leading UTF-8 byte-order mark (spreadsheet programs
/// write one before a CSV's header): every text propdp reads goes through it.
///
/// ```
/// assert_eq!(propdp_core::input::without_bom("\u{feff}a,b\n"), "a,b\n");
/// assert_eq!(propdp_core::input::without_bom("a,b\n"), "a,b\n");
/// ```
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// What a file that is not regular is, in words.
fn kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "FIFO";
        }
        if t.is_char_device() {
            return "character device";
        }
        if t.is_block_device() {
            return "block device";
        }
        if t.is_socket() {
            return "socket";
        }
    }
    if t.is_dir() { "directory" } else { "special file" }
}

/// This machine's memory in bytes (MemTotal of /proc/meminfo; 16 GB where
/// that cannot be read).
pub fn machine_memory() -> f64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(16e9, |kb| kb * 1024.0)
}
