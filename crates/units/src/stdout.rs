//! Printing for command-line tools: a reader that went away (`cclab kernel list | head
//! -1`, or stderr piped the same way) ends the output quietly instead of panicking as
//! `println!` and `eprintln!` do.

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

/// Writes `text` and a newline to stderr, ignoring a closed pipe.
pub fn err_line(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{text}");
}

/// `eprintln!` that ignores a closed stderr (see the module doc).
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::stdout::err_line(&format!($($arg)*))
    };
}

/// `println!` that ignores a closed stdout (see the module doc).
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::stdout::outln(&format!($($arg)*))
    };
}
