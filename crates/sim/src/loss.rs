//! Random loss at the bottleneck: Bernoulli and Gilbert-Elliott (a two-state Markov
//! chain; Gilbert 1960, Elliott 1963). A plain struct: the caller passes the RNG, so the
//! emulator can reuse it with its own stream.

use crate::config::LossModel;
use crate::rng::Rng;

#[derive(Clone, Debug)]
pub struct Loss {
    model: LossModel,
    /// Gilbert-Elliott: currently in the Bad state.
    bad: bool,
}

impl Loss {
    pub fn new(model: LossModel) -> Loss {
        Loss { model, bad: false }
    }

    /// Decides the fate of one packet: `true` means it is lost.
    #[inline]
    pub fn drop_packet(&mut self, rng: &mut Rng) -> bool {
        // Most links lose nothing at random: that answer is given inline, the draws
        // out of line.
        if let LossModel::None = self.model {
            return false;
        }
        self.draw(rng)
    }

    #[inline(never)]
    fn draw(&mut self, rng: &mut Rng) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => rng.chance(p),
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => {
                // Move first, then draw the loss in the new state.
                if self.bad {
                    if rng.chance(p_bad_to_good) {
                        self.bad = false;
                    }
                } else if rng.chance(p_good_to_bad) {
                    self.bad = true;
                }
                rng.chance(if self.bad { loss_bad } else { loss_good })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernoulli_rate_and_gilbert_elliott_bursts() {
        let mut rng = Rng::from_seed(3);
        let mut b = Loss::new(LossModel::Bernoulli { p: 0.01 });
        let n = 200_000;
        let lost = (0..n).filter(|_| b.drop_packet(&mut rng)).count() as f64 / n as f64;
        assert!((lost - 0.01).abs() < 0.001, "{lost}");
        // Stationary Bad share = p_gb / (p_gb + p_bg) = 0.01/0.11; loss only in Bad.
        let mut ge = Loss::new(LossModel::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.1,
            loss_good: 0.0,
            loss_bad: 1.0,
        });
        let seq: Vec<bool> = (0..n).map(|_| ge.drop_packet(&mut rng)).collect();
        let rate = seq.iter().filter(|&&x| x).count() as f64 / n as f64;
        assert!((rate - 0.0909).abs() < 0.01, "{rate}");
        // Bursty: P(loss | previous loss) is far above the mean (about 0.9).
        let pairs = seq.windows(2).filter(|w| w[0]).count() as f64;
        let both = seq.windows(2).filter(|w| w[0] && w[1]).count() as f64;
        assert!(both / pairs > 0.8, "{}", both / pairs);
    }
}
