//! `cclab`: a lab for TCP congestion control. This file only parses the command line and
//! hands each subcommand to its own module of the `cclab_cli` library (src/lib.rs); to
//! add one, declare its module there and add a variant to [`Command`] (its `Args` struct
//! lives in the module) plus one match arm.

use clap::{CommandFactory, Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

use cclab_cli::{algorithms, bench, compare, fidelity, reproduce, run, serve, testbed};

/// glibc's allocator; the commands that simulate ask for huge pages under their flow
/// table, rings and queues (`cclab_cli::huge_pages`).
#[global_allocator]
static ALLOCATOR: cclab_cli::huge_pages::HugePageHints = cclab_cli::huge_pages::HugePageHints;

#[derive(Parser)]
#[command(
    name = "cclab",
    version,
    about = "A lab for TCP congestion control: a deterministic packet-level simulator with Linux-faithful algorithms"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file (or the built-in default) and write a results folder.
    Run(run::Args),
    /// Run the standard benchmark scenarios, each in its own process, and print speed and memory.
    Bench(bench::Args),
    /// List every algorithm with its parameters, defaults, ranges, units and source.
    Algorithms(algorithms::Args),
    /// Real kernel: cclab's algorithms as eBPF struct_ops congestion control, tuned live (root).
    Kernel(cclab_kernel::cli::Args),
    /// Link emulator between two network namespaces, like mahimahi's mm-link (needs root).
    Emu(cclab_emu::cli::EmuArgs),
    /// Run a scenario on real TCP through the emulator (root).
    Testbed(testbed::Args),
    /// One of cclab's own algorithms in a user-space TCP over UDP through the emulated link
    /// (the same as `cclab emu udp`; for algorithms the kernel lacks, such as tahoe).
    Udp(cclab_emu::cli::UdpArgs),
    /// Two results folders side by side with their differences, and overlay plots.
    Compare(compare::Args),
    /// Run the seed papers' experiments and set cclab's numbers beside the papers'.
    Reproduce(reproduce::Args),
    /// Multi-flow scenarios in the simulator and on the real kernel, side by side (root).
    Fidelity(fidelity::Args),
    /// The web lab: edit, run, watch and tune scenarios in a browser (http://127.0.0.1:7878).
    Serve(serve::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return bad_command_line(e),
    };
    if matches!(
        cli.command,
        Command::Run(_) | Command::Bench(_) | Command::Reproduce(_) | Command::Fidelity(_)
    ) {
        cclab_cli::huge_pages::enable();
    }
    // A simulated run, sweep, reproduction or comparison interrupted leaves no staging
    // behind. The emulator's commands (`testbed`, `fidelity`) keep their own signal
    // handlers, which stop the forwarder and remove the namespaces; `reproduce --testbed`
    // hands the signals back to them after its simulated sweeps.
    if matches!(cli.command, Command::Run(_) | Command::Compare(_) | Command::Reproduce(_)) {
        let then = match &cli.command {
            Command::Compare(_) => "",
            _ => " (a sweep or a reproduction run again goes on from the runs it finished)",
        };
        if let Err(e) = cclab_units::interrupt::remove_staged_on_signals(then) {
            let _ = writeln!(
                std::io::stderr(),
                "warning: Ctrl-C will leave unfinished results hidden beside --out: {e}"
            );
        }
    }
    let result = match cli.command {
        Command::Run(a) => run::main(a),
        Command::Bench(a) => bench::main(a),
        Command::Algorithms(a) => algorithms::main(a),
        Command::Kernel(a) => cclab_kernel::cli::run(a).map_err(|e| e.to_string()),
        Command::Emu(a) => return cclab_emu::cli::main(&a),
        Command::Testbed(a) => testbed::main(a),
        Command::Udp(a) => cclab_emu::cli::run_udp(&a).map_err(|e| e.to_string()),
        Command::Compare(a) => compare::main(a),
        Command::Reproduce(a) => reproduce::main(a),
        Command::Fidelity(a) => fidelity::main(a),
        Command::Serve(a) => serve::main(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            let _ = writeln!(std::io::stderr(), "error: {msg}");
            // Stopped by Ctrl-C, SIGTERM or SIGHUP through the emulator's handlers: the
            // shell's status for that signal (128 + its number), as `cclab run` and
            // `cclab emu` give, so that a script tells an interrupted run from a failed one.
            match cclab_emu::forwarder::signal_exit_status() {
                Some(status) => ExitCode::from(status),
                None => ExitCode::FAILURE,
            }
        }
    }
}

/// clap reads a value that begins with '-' (`--uplink -5Mbps`) as an option of its own
/// ("unexpected argument '-5' found"). Said for what it is: "--uplink -5Mbps: ...".
/// `refused` is the argument clap could not place ("-5").
fn negative_value(args: &[String], refused: &str) -> Option<String> {
    let is_refused = |a: &str| a.starts_with(refused) && cclab_units::is_negative_figure(a);
    args.windows(2)
        .find(|w| w[0].starts_with("--") && !w[0].contains('=') && is_refused(&w[1]))
        .map(|w| {
            format!("{} {}: a value that begins with '-' is taken for an option, and no quantity here is negative", w[0], w[1])
        })
}

/// Help and version go to stdout as clap writes them; a usage error becomes one line.
fn bad_command_line(e: clap::Error) -> ExitCode {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let text = e.render().to_string();
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("bad command line").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let args: Vec<String> =
        std::env::args_os().skip(1).map_while(|a| a.into_string().ok()).collect();
    let negative = match (e.kind(), e.get(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(ContextValue::String(refused))) => {
            negative_value(&args, refused)
        }
        _ => None,
    };
    let first = negative.as_deref().unwrap_or(first);
    let strings = |kind| match e.get(kind) {
        Some(ContextValue::Strings(values)) if !values.is_empty() => Some(values.join(", ")),
        _ => None,
    };
    let detail = match e.kind() {
        // clap lists the missing arguments on the lines after the first.
        ErrorKind::MissingRequiredArgument => {
            strings(ContextKind::InvalidArg).map(|a| format!(" {a}"))
        }
        // A value outside a fixed set: say which values are allowed.
        _ => strings(ContextKind::ValidValue).map(|v| format!("; allowed: {v}")),
    };
    // clap's "a similar value exists" tip, kept on the one line.
    let similar = match e.get(ContextKind::SuggestedValue) {
        Some(ContextValue::String(s)) => format!("; did you mean '{s}'?"),
        _ => String::new(),
    };
    // The help of the command that was given, where one was.
    // (args_os: a path need not be Unicode, and clap takes it.)
    let given: Vec<String> = args.into_iter().take_while(|a| !a.starts_with('-')).collect();
    let mut help = vec!["cclab".to_string()];
    let mut command = Cli::command();
    for word in given {
        let Some(sub) = command.find_subcommand(&word).cloned() else { break };
        help.push(word);
        command = sub;
    }
    let _ = writeln!(
        std::io::stderr(),
        "error: {first}{}{similar} (see {} --help)",
        detail.unwrap_or_default(),
        help.join(" ")
    );
    ExitCode::from(2)
}
