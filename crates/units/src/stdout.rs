//! Printing to stdout for command-line tools: a reader that went away (`cclab kernel list
//! | head -1`) ends the output quietly instead of panicking as `println!` does.

use std::io::Write;

/// Writes `text` to stdout, ignoring a closed pipe.
pub fn out(text: &str) {
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(text.as_bytes()).and_then(|_| o.flush());
}

/// [`out`] with a newline.
pub fn outln(text: &str) {
    out(&format!("{text}\n"));
}
