mod common;
use common::*;
use cclab_units::Rate;

#[test]
fn smoke() {
    let rate = Rate::from_mbps(10);
    let cfg = dumbbell(rate, ms(10), bdp_packets(rate, ms(50)), 20, vec![flow("reno", ms(50))]);
    let r = run(cfg);
    println!("{r:#?}");
}
