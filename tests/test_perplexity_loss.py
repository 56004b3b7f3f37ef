"""`perplexity_loss`, the one conversion of a printed perplexity to the loss it is the exponential of, shared by the
console readers (OpenNMT, Joey NMT, MXNet's Speedometer, checkpoint evaluations, DeepSpeed-Chat)."""
import math

from forensics.ingest.console_lines.fields import perplexity_loss


def test_a_perplexity_is_read_as_its_natural_log():
    assert perplexity_loss(math.e ** 2) == 2.0
    assert perplexity_loss(1.0) == 0.0


def test_an_infinite_perplexity_is_an_infinite_loss_and_no_perplexity_above_0_is_nan():
    assert perplexity_loss(math.inf) == math.inf
    assert all(math.isnan(perplexity_loss(v)) for v in (0.0, -3.0, math.nan))
