"""The Poisson random-intercept GLMM: quadrature against numerical integration, the fit
against a known model and against gpboost's Laplace fit, and its use in the fairness audit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from werest.evaluation.fairness import FairnessSettings, audit_category
from werest.evaluation.glmm import cluster_integrals, fit_poisson_glmm, marginal_loglik


@pytest.mark.parametrize(
    ("a", "b", "sigma"), [(0.0, 0.5, 0.3), (3.0, 2.0, 1.0), (12.0, 4.0, 0.2), (2.4, 0.1, 2.0)]
)
def test_adaptive_quadrature_matches_numerical_integration(a, b, sigma):
    def integrand(u):
        return np.exp(a * u - b * np.exp(u)) * stats.norm.pdf(u, scale=sigma)

    exact = np.log(integrate.quad(integrand, -40, 40, points=[0.0], limit=200)[0])
    ours = cluster_integrals(np.array([a]), np.array([b]), sigma, n_nodes=15)[0]
    assert ours == pytest.approx(exact, abs=1e-5)  # 4e-6 at worst (σ = 2, few errors)
    many = cluster_integrals(np.array([a]), np.array([b]), sigma, n_nodes=60)[0]
    assert many == pytest.approx(exact, abs=1e-9)
    laplace = cluster_integrals(np.array([a]), np.array([b]), sigma, n_nodes=1)[0]
    assert laplace == pytest.approx(exact, abs=0.05)  # close, not exact


def simulated(seed: int = 0, speakers: int = 200, per_speaker: int = 8, sd: float = 0.6):
    rng = np.random.default_rng(seed)
    speaker = np.repeat(np.arange(speakers), per_speaker)
    group = rng.integers(0, 3, speakers)[speaker]
    words = rng.integers(3, 30, len(speaker)).astype(float)
    u = rng.normal(0, sd, speakers)[speaker]
    x = pd.DataFrame({"const": 1.0, "g1": (group == 1) * 1.0, "g2": (group == 2) * 1.0})
    y = rng.poisson(words * np.exp(x.to_numpy() @ np.array([-2.0, 0.3, -0.2]) + u))
    return y.astype(float), x, words, speaker, group


def test_fit_matches_gpboost_laplace_on_the_same_data():
    # gpboost 1.8.0 on this data: GPModel(group_data=speaker, likelihood="poisson")
    # .fit(y, X, offset=log words) gives coefficients (-2.057, 0.2168, -0.314), random-effect
    # variance 0.3231 and log-likelihood -2745.4018 (its Laplace approximation)
    y, x, words, speaker, _ = simulated()
    laplace = fit_poisson_glmm(y, x, np.log(words), speaker, n_nodes=1)
    assert laplace.llf == pytest.approx(-2745.4018, abs=2e-3)
    assert laplace.sigma**2 == pytest.approx(0.3231, abs=2e-3)
    assert laplace.params.to_numpy() == pytest.approx([-2.057, 0.2168, -0.314], abs=2e-3)
    exact = fit_poisson_glmm(y, x, np.log(words), speaker, n_nodes=15)
    assert exact.converged and exact.n_clusters == 200
    assert exact.llf > laplace.llf  # quadrature refines the Laplace approximation
    assert exact.llf == pytest.approx(
        fit_poisson_glmm(y, x, np.log(words), speaker, n_nodes=25).llf, abs=1e-4
    )
    assert exact.sigma == pytest.approx(0.6, abs=0.1)  # the simulated SD


def test_without_speaker_variation_it_is_the_poisson_glm():
    from statsmodels.genmod.families import Poisson
    from statsmodels.genmod.generalized_linear_model import GLM

    y, x, words, speaker, _ = simulated(seed=1, sd=0.0)
    glm = GLM(y, x, family=Poisson(), offset=np.log(words)).fit()
    theta = np.append(glm.params.to_numpy(), np.log(1e-6))
    codes = pd.factorize(speaker)[0]
    value = marginal_loglik(theta, y, x.to_numpy(), np.log(words), codes, codes.max() + 1, 15)
    assert value == pytest.approx(glm.llf, abs=1e-6)
    fit = fit_poisson_glmm(y, x, np.log(words), speaker)
    assert fit.llf >= glm.llf - 1e-4  # the GLM is the σ → 0 edge of the GLMM
    assert fit.sigma < 0.15


def audit_frame(shift: float, seed: int = 2) -> pd.DataFrame:
    y, _, words, speaker, group = simulated(seed=seed)
    if shift:  # group 1 gets exp(shift) times the errors, drawn again
        rng = np.random.default_rng(seed + 10)
        y = np.where(group == 1, rng.poisson(y * np.exp(shift)), y)
    labels = np.array(["a", "b", "c"])[group]
    return pd.DataFrame({"errors": y, "words": words, "gender": labels, "speaker": speaker})


def test_audit_with_the_glmm_uses_its_likelihood_ratio_test():
    settings = FairnessSettings(categories=("gender",), model="glmm", covariates=())
    result = audit_category(audit_frame(1.0), "gender", settings)
    assert result.test.startswith("LRT (Poisson GLMM")
    assert result.df == 2 and result.p_value < 1e-6  # a real disparity
    worst = result.groups.sort_values("predicted_wer")["group"].iat[-1]
    assert worst == "b"
    assert result.groups["raw_score"].between(0, 100).all()
    glm = audit_category(audit_frame(1.0), "gender", FairnessSettings(categories=("gender",)))
    assert glm.test.startswith("Wald")
    # both models see the same ordering of groups
    assert list(result.groups.sort_values("predicted_wer")["group"]) == list(
        glm.groups.sort_values("predicted_wer")["group"]
    )


def test_glmm_without_a_speaker_column_falls_back_to_the_glm():
    settings = FairnessSettings(categories=("gender",), model="glmm", covariates=())
    result = audit_category(audit_frame(0.0).drop(columns="speaker"), "gender", settings)
    assert result.test.startswith("LRT / φ̂")
    assert "no speaker values: GLM instead of the GLMM" in result.note


def test_glmm_accepts_quasi_counts():
    frame = audit_frame(0.0)
    frame["errors"] = frame["errors"] * 0.7 + 0.1  # estimated error counts are not integers
    settings = FairnessSettings(categories=("gender",), model="glmm", covariates=())
    result = audit_category(frame, "gender", settings)
    assert np.isfinite(result.statistic) and 0 <= result.p_value <= 1


def test_settings_refuse_an_unknown_model():
    with pytest.raises(Exception, match=r"fairness\.model must be one of glm, glmm"):
        FairnessSettings(model="gee")


def test_gradient_matches_finite_differences():
    from scipy import optimize

    from werest.evaluation.glmm import _loglik_and_gradient

    y, x, words, speaker, _ = simulated(seed=3, speakers=40, per_speaker=5)
    codes = pd.factorize(speaker)[0]
    args = (y, x.to_numpy(), np.log(words), codes, 40, 15)
    for theta in ([-2.1, 0.2, -0.1, np.log(0.4)], [-1.5, 0.0, 0.5, np.log(1.5)]):
        theta = np.asarray(theta)
        analytic = _loglik_and_gradient(theta, *args)[1]
        numeric = optimize.approx_fprime(theta, lambda t: _loglik_and_gradient(t, *args)[0], 1e-6)
        assert analytic == pytest.approx(numeric, rel=1e-4, abs=1e-3)
