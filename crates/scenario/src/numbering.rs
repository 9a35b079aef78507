//! How a scenario file numbers its flows: `changes[].flow`, `metrics.reference = N` and
//! the `#N` of a flow's name count every `[[flows]]` entry's flows after `count` is
//! expanded, those of an entry with `enabled = false` included. So switching one entry
//! off (`--set flows[0].enabled=false`) does not move a change or a reference onto
//! another flow; naming a flow that does not run is refused instead.

/// One `[[flows]]` entry's block of numbers.
#[derive(Clone, Debug)]
struct Block {
    /// The entry's position in the file (`flows[entry]`).
    entry: usize,
    /// Its flows' numbers in the file: `first..first + count`.
    first: usize,
    count: usize,
    /// The run's index of its first flow; `None` when the entry is disabled.
    run_first: Option<usize>,
}

/// The file's numbering of flows against the run's.
#[derive(Clone, Debug, Default)]
pub struct FlowNumbers {
    blocks: Vec<Block>,
    /// The positions in `blocks` of the entries that run (with at least one flow).
    running: Vec<usize>,
}

impl FlowNumbers {
    /// Entries' flow counts, in file order, and whether each runs.
    pub(crate) fn new(entries: impl IntoIterator<Item = (usize, bool)>) -> FlowNumbers {
        let (mut first, mut run_first) = (0, 0);
        let mut blocks = Vec::new();
        for (entry, (count, runs)) in entries.into_iter().enumerate() {
            blocks.push(Block { entry, first, count, run_first: runs.then_some(run_first) });
            first += count;
            if runs {
                run_first += count;
            }
        }
        let running = (0..blocks.len())
            .filter(|&k| blocks[k].run_first.is_some() && blocks[k].count > 0)
            .collect();
        FlowNumbers { blocks, running }
    }

    /// How many flows the file numbers, disabled ones included.
    pub fn len(&self) -> usize {
        self.blocks.last().map_or(0, |b| b.first + b.count)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The run's index of the file's flow `n`, or why there is none.
    pub fn run_index(&self, n: usize) -> Result<usize, String> {
        // Blocks are in file order, so by `first`: the last one starting at or before `n`
        // (a binary search: a generated file may have a [[flows]] entry per flow).
        let at = self.blocks.partition_point(|b| b.first <= n);
        let block = at
            .checked_sub(1)
            .map(|k| &self.blocks[k])
            .filter(|b| n < b.first + b.count)
            .ok_or_else(|| format!("out of range; allowed: {}", self.allowed()))?;
        match block.run_first {
            Some(r) => Ok(r + n - block.first),
            None => Err(format!(
                "flow {n} is one of flows[{}], which has enabled = false and does not run \
                 (flows keep their numbers when an entry is switched off); \
                 enable it, or remove what names it",
                block.entry
            )),
        }
    }

    /// The file's number of the run's flow `i` (what a saved `[[changes]]` entry writes).
    pub fn file_index(&self, i: usize) -> usize {
        // The running blocks are in run order too: the last one starting at or before `i`.
        let at = self.running.partition_point(|&k| self.blocks[k].run_first <= Some(i));
        at.checked_sub(1)
            .map(|k| &self.blocks[self.running[k]])
            .and_then(|b| {
                let r = b.run_first?;
                (i < r + b.count).then(|| b.first + i - r)
            })
            .unwrap_or(i)
    }

    /// The numbers allowed, for an error message.
    pub fn allowed(&self) -> String {
        cclab_sim::validate::flow_indices_allowed(self.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disabled_entry_keeps_its_numbers_and_the_others_theirs() {
        // flows[0]: 2 flows, disabled; flows[1]: 3 flows; flows[2]: 1 flow.
        let n = FlowNumbers::new([(2, false), (3, true), (1, true)]);
        assert_eq!(n.len(), 6);
        assert!(n.run_index(1).unwrap_err().contains("flows[0], which has enabled = false"));
        assert_eq!((n.run_index(2), n.run_index(4), n.run_index(5)), (Ok(0), Ok(2), Ok(3)));
        assert!(n.run_index(6).unwrap_err().contains("[0, 5] (there are 6 flows)"));
        assert_eq!((n.file_index(0), n.file_index(3)), (2, 5));
    }

    #[test]
    fn empty_entries_do_not_hide_their_neighbours() {
        // flows[1] drew no transfers (arrivals); flows[2] is off.
        let n = FlowNumbers::new([(1, true), (0, true), (2, false), (2, true)]);
        assert_eq!((n.run_index(0), n.run_index(3), n.run_index(4)), (Ok(0), Ok(1), Ok(2)));
        assert!(n.run_index(1).unwrap_err().contains("flows[2]"));
        assert_eq!((n.file_index(0), n.file_index(1), n.file_index(2)), (0, 3, 4));
    }

    #[test]
    fn with_every_entry_running_the_numbers_are_the_runs() {
        let n = FlowNumbers::new([(2, true), (1, true)]);
        for i in 0..3 {
            assert_eq!((n.run_index(i), n.file_index(i)), (Ok(i), i));
        }
    }
}
