"""BREP-MI in a generator's latent space against a label-only endpoint (paper 002, Algorithm 1; Appendix B.1 on
digits): the arrays-only MLP matches scikit-learn, the endpoint and the attack keep to the budget, and the
attack recovers private classes the evaluator confirms — more than its own starting points do."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attacks.inversion import BudgetExhausted, LocalLabelOracle, PcaGenerator, brep_mi
from attacks.inversion.digits import DigitsChallenge, build_digits_challenge
from scoring.inversion import InversionTask, MlpClassifier, evaluate_reconstructions


def _digits() -> DigitsChallenge:
    return build_digits_challenge(seed=0)  # cached by the module


def test_the_arrays_only_mlp_predicts_as_scikit_learn_does() -> None:
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier

    digits = load_digits()
    private = digits.target < 5
    x, y = digits.data[private] / 16.0, digits.target[private]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few iterations are enough to compare predictions
        model = MLPClassifier(hidden_layer_sizes=(8,), max_iter=20, random_state=3).fit(x, y)
    ours = MlpClassifier.from_sklearn(model, input_scale=16.0)
    assert np.array_equal(ours.predict(digits.data[private]), model.predict(x))
    assert np.array_equal(MlpClassifier.from_bytes(ours.to_bytes()).predict(digits.data), ours.predict(digits.data))


def test_the_generator_decodes_inside_the_pixel_range_and_its_mean_at_zero() -> None:
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 16, (200, 64))
    generator = PcaGenerator.fit(images, n_latent=8)
    assert np.allclose(generator.decode(np.zeros((1, 8)))[0], np.clip(images.mean(axis=0), 0, 16))
    far = generator.decode(50.0 * rng.standard_normal((20, 8)))
    assert far.min() >= 0.0 and far.max() <= 16.0


def test_the_local_endpoint_refuses_a_batch_over_the_budget_and_charges_nothing() -> None:
    task = InversionTask(n_features=2, n_classes=2, image_shape=(1, 2), low=0.0, high=1.0)
    oracle = LocalLabelOracle(MlpClassifier((np.eye(2),), (np.zeros(2),)), task, budget=3)
    oracle.predict(np.array([[0.0, 1.0], [1.0, 0.0]]))
    with pytest.raises(BudgetExhausted) as refused:
        oracle.predict(np.zeros((2, 2)))
    assert refused.value.left == 1 and oracle.queries == 2


@pytest.mark.parametrize("budget", [150, 1000])
def test_the_attack_never_spends_more_than_its_budget(budget: int) -> None:
    challenge = _digits()
    oracle = LocalLabelOracle(challenge.target, challenge.task, budget=10_000)
    result = brep_mi(oracle, challenge.generator, budget=budget, seed=1)
    assert result.queries == oracle.queries <= budget


def test_brep_mi_recovers_the_private_digits_from_hard_labels() -> None:
    challenge = _digits()
    oracle = LocalLabelOracle(challenge.target, challenge.task, budget=5000)
    result = brep_mi(oracle, challenge.generator, seed=0)
    verdict = evaluate_reconstructions(challenge.evaluator, result.reconstructions)
    # Paper 002, Appendix B.1: 4 of 5 private MNIST classes; on the digits at 5,000 queries we recover all 5.
    assert verdict.recovered >= 4
    assert all(run.started and run.growths > 0 for run in result.runs)
    # The target labels every reconstruction as its class (the search stays inside the accepted region).
    assert challenge.target.predict(result.reconstructions).tolist() == [0, 1, 2, 3, 4]


def test_the_repulsion_moves_reconstructions_away_from_the_start_into_the_class() -> None:
    # Over seeds, the evaluator recognises more reconstructions after the search than at its starting points.
    challenge = _digits()
    after = before = 0
    for seed in range(4):
        result = brep_mi(LocalLabelOracle(challenge.target, challenge.task, budget=5000), challenge.generator,
                         seed=seed)
        after += evaluate_reconstructions(challenge.evaluator, result.reconstructions).recovered
        before += evaluate_reconstructions(challenge.evaluator, challenge.generator.decode(result.start_latents)
                                           ).recovered
    assert after == 20 and before < after
