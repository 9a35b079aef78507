//! TCPTuner's tunable CUBIC (Miller and Hsiao, "TCPTuner: Congestion Control Your Way",
//! Stanford 2016; module `tcp_tuner.c` in github.com/Gasparila/TCPTuner): Linux CUBIC
//! plus `alpha`, which multiplies W_max at every loss (`last_max_cwnd = last_max_cwnd *
//! alpha / 512`, after fast convergence), so alpha > 1 keeps the flow in the fast
//! concave start longer and alpha < 1 keeps it below the old plateau.
//!
//! It is [`crate::cubic::CubicCore`] with `alpha` exposed; `beta`, `fast_convergence` and
//! `tcp_friendliness` are the same knobs as `cubic`'s. All are changeable on a running
//! flow, and, unlike TCPTuner and Linux (which compute `beta_scale` once at module load),
//! the derived constants follow every change. The TCP-level knobs TCPTuner sets through
//! `ip route` (`rto_min`, `initcwnd`) belong to the sender, not here.
//!
//! TCPTuner was cloned from an older tcp_cubic.c (HyStart delay in ms << 3,
//! `bictcp_undo_cwnd` using `loss_cwnd`); we apply alpha to the current kernel's CUBIC so
//! that `tuner` with alpha = 1 is exactly `cubic`.

use crate::cubic::{forward_to_cubic_core, CubicConfig, CubicCore};
use crate::cubic_config::{params_of, Variant};
use crate::params::ParamSpec;
use crate::registry::AlgorithmInfo;
use crate::CongestionControl;

/// Every tunable in [`crate::cubic_config::TUNABLES`]: `cubic`'s parameters plus `alpha`.
pub const TUNER_PARAMS: &[ParamSpec] = params_of!(Variant::Tuner);

/// TCPTuner: CUBIC with alpha.
#[derive(Clone, Debug)]
pub struct Tuner {
    pub(crate) core: CubicCore,
    hz: u32,
}

impl Default for Tuner {
    fn default() -> Self {
        Tuner::new(CubicConfig::default())
    }
}

impl Tuner {
    pub const INFO: AlgorithmInfo = AlgorithmInfo {
        name: "tuner",
        summary: "TCPTuner: Linux CUBIC with alpha scaling W_max; alpha, beta and the switches retunable live",
        source: "Miller & Hsiao, TCPTuner (Stanford 2016), tcp_tuner.c; Linux tcp_cubic.c",
        params: TUNER_PARAMS,
    };

    pub fn new(cfg: CubicConfig) -> Tuner {
        Tuner { core: CubicCore::new(cfg), hz: 1000 }
    }
}

impl CongestionControl for Tuner {
    forward_to_cubic_core!(core, TUNER_PARAMS);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cubic::tests::ca_state;
    use crate::cubic::{Cubic, CUBIC_PARAMS};
    use crate::replay::{replay, Event};

    #[test]
    fn params_are_alpha_then_cubics() {
        assert_eq!(TUNER_PARAMS[0].name, "alpha");
        assert_eq!(&TUNER_PARAMS[1..], CUBIC_PARAMS);
    }

    #[test]
    fn alpha_scales_w_max() {
        for (alpha, expect) in [(1.0, 1000u32), (2.0, 2000), (0.5, 500), (1.5, 1500)] {
            let mut t = Tuner::default();
            t.apply_param("alpha", alpha);
            let tp = ca_state(1000);
            let ssthresh = t.ssthresh(&tp);
            assert_eq!(t.core.state().last_max_cwnd, expect, "alpha {alpha}");
            assert_eq!(ssthresh, 1000 * 717 / 1024, "alpha does not touch the decrease");
        }
    }

    /// TCPTuner's bug: beta written at run time leaves beta_scale (the Reno-friendly
    /// slope) at the load-time value. Ours follows.
    #[test]
    fn beta_change_recomputes_beta_scale() {
        let mut t = Tuner::default();
        assert_eq!(t.core.derived().beta_scale, 15);
        t.apply_param("beta", 0.25);
        assert_eq!(t.core.derived().beta, 256);
        assert_eq!(t.core.derived().beta_scale, 8 * (1024 + 256) / 3 / (1024 - 256));
        let tp = ca_state(1000);
        assert_eq!(t.ssthresh(&tp), 250);
        t.apply_param("beta", 1.0);
        assert_eq!(t.ssthresh(&ca_state(1000)), 1000, "beta = 1: no decrease");
        assert_eq!(
            t.core.derived().beta_scale,
            u32::MAX,
            "beta = 1: Reno estimate frozen, no division by zero"
        );
    }

    /// With alpha = 1 the tuner is cubic, event for event.
    #[test]
    fn alpha_one_is_cubic() {
        let mut events = vec![];
        for i in 0..40u32 {
            events.push(Event::AckRound { rtt_us: 40_000 + (i % 7) * 1000, duration_us: 40_000 });
            if i % 9 == 8 {
                events.push(Event::Loss);
            }
        }
        events.push(Event::Timeout);
        events.push(Event::AckRound { rtt_us: 40_000, duration_us: 40_000 });
        assert_eq!(replay(&mut Tuner::default(), &events), replay(&mut Cubic::default(), &events));
        let mut t = Tuner::default();
        t.apply_param("alpha", 2.0);
        assert_ne!(replay(&mut t, &events), replay(&mut Cubic::default(), &events));
    }
}
