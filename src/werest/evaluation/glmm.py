"""A Poisson GLMM with one random intercept per cluster, fitted by maximum likelihood.

The ASR fairness leaderboard (ASR-FAIRBENCH, Rai et al. 2025) models each utterance's error
count with a mixed-effects Poisson regression, a random intercept per speaker, and tests a
demographic group with a likelihood-ratio test. statsmodels has no maximum-likelihood mixed
Poisson model, so this module fits it directly:

    y_i ~ Poisson(μ_i),  log μ_i = o_i + x_iᵀβ + u_s(i),  u_s ~ N(0, σ²) independently,

with o_i the offset (log words). The marginal log-likelihood is a sum over clusters s of a
one-dimensional integral over u_s. Inside a cluster the integrand only depends on
a_s = Σ y_i and b_s = Σ exp(o_i + x_iᵀβ):

    ℓ_s = Σ_i [y_i(o_i + x_iᵀβ) − log Γ(y_i + 1)] + log ∫ exp(a_s u − b_s eᵘ) φ(u; 0, σ²) du,

so the integrals of every cluster are computed at once by **adaptive Gauss–Hermite
quadrature** (Pinheiro & Bates 1995): the nodes are centred on each cluster's mode û_s
(a few vectorised Newton steps) and scaled by the curvature there; one node is the Laplace
approximation (lme4's ``nAGQ=1``), the default ``n_nodes=15`` is exact to optimiser precision
for a scalar random effect. (β, log σ) maximise the sum with L-BFGS-B started from the GLM,
with the analytic gradient (Fisher's identity, the posterior expectations by the same
quadrature): dozens of accent groups would otherwise cost dozens of likelihoods a step.

The counts need not be integers: log Γ(y + 1) is defined for any y ≥ 0, which lets the
label-free audit use estimated error counts (quasi-counts) as the GLM does.

Why not a library: gpboost (PyPI) fits Poisson models with grouped random effects by a
Laplace approximation and reports the negative log-likelihood, and accepts an offset through
``fixed_effects``, but it refuses non-integer responses for the Poisson likelihood (the
label-free audit's quasi-counts) and its Laplace approximation cannot be refined; see
``experiments/fairness_glmm.py`` for the comparison on the same data.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special

#: from this many nodes the quadrature is exact enough for the analytic gradient
ANALYTIC_GRADIENT_NODES = 7
#: bounds of log σ: σ from 1e-4 (no speaker variation) to e⁴ ≈ 55 (far beyond real data)
LOG_SIGMA_BOUNDS = (np.log(1e-4), 4.0)


@dataclass
class GLMMResult:
    """A fitted Poisson random-intercept model.

    Attributes
    ----------
    params : fixed-effect coefficients β, by column of the design.
    sigma : the random intercepts' standard deviation σ.
    llf : the maximised marginal log-likelihood.
    converged : whether the optimiser reported success.
    n_clusters : number of clusters (speakers).
    random_effects : each cluster's conditional mode û_s, by cluster code.
    """

    params: pd.Series
    sigma: float
    llf: float
    converged: bool
    n_clusters: int
    random_effects: np.ndarray


def cluster_integrals(a: np.ndarray, b: np.ndarray, sigma: float, n_nodes: int) -> np.ndarray:
    """log ∫ exp(a·u − b·eᵘ) φ(u; 0, σ²) du for every cluster, by adaptive Gauss–Hermite.

    Parameters
    ----------
    a : per cluster Σ y_i.
    b : per cluster Σ exp(o_i + x_iᵀβ) (> 0).
    sigma : the random-intercept SD (> 0).
    n_nodes : quadrature nodes; 1 = the Laplace approximation.
    """
    return _quadrature(a, b, sigma, n_nodes)[0]


def _quadrature(a: np.ndarray, b: np.ndarray, sigma: float, n_nodes: int):
    """(log integrals, nodes u_sk, posterior weights w_sk) of every cluster.

    The weights (each cluster's row sums to 1) give posterior expectations of functions of
    u_s, which is what the gradient needs.
    """
    mode = _modes(a, b, sigma)
    curvature = b * np.exp(mode) + 1.0 / sigma**2  # −h''(û) > 0
    scale = 1.0 / np.sqrt(curvature)
    nodes, weights = np.polynomial.hermite.hermgauss(n_nodes)
    u = mode[:, None] + np.sqrt(2.0) * scale[:, None] * nodes[None, :]
    h = a[:, None] * u - b[:, None] * np.exp(u) - u**2 / (2 * sigma**2)
    log_terms = h + nodes[None, :] ** 2 + np.log(weights)[None, :]
    total = special.logsumexp(log_terms, axis=1)
    integral = total + np.log(np.sqrt(2.0) * scale) - 0.5 * np.log(2 * np.pi * sigma**2)
    return integral, u, np.exp(log_terms - total[:, None])


def _modes(a: np.ndarray, b: np.ndarray, sigma: float, steps: int = 50) -> np.ndarray:
    """The mode û of a·u − b·eᵘ − u²/(2σ²) per cluster (Newton, concave so it converges)."""
    precision = 1.0 / sigma**2
    # start between the prior mode 0 and the data mode log(a/b), weighted by curvature
    data_mode = np.log(np.maximum(a, 0.5) / b)
    u = data_mode * b / (b + precision)
    for _ in range(steps):
        grow = b * np.exp(u)
        gradient = a - grow - u * precision
        step = gradient / (grow + precision)
        u = u + np.clip(step, -5.0, 5.0)
        if np.max(np.abs(step)) < 1e-10:
            break
    return u


def marginal_loglik(
    theta: np.ndarray,
    y: np.ndarray,
    x: np.ndarray,
    offset: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
    n_nodes: int,
) -> float:
    """The marginal log-likelihood at θ = (β, log σ)."""
    return _loglik_and_gradient(theta, y, x, offset, codes, n_clusters, n_nodes)[0]


def _loglik_and_gradient(theta, y, x, offset, codes, n_clusters, n_nodes):
    """ℓ(θ) and its gradient: ∂ℓ/∂β = Σ_i x_i (y_i − exp(η_i)·E[e^u_s(i) | y]) and
    ∂ℓ/∂log σ = Σ_s (E[u_s² | y]/σ² − 1), the posterior expectations by the same quadrature
    (Fisher's identity: the score of a marginal likelihood is the posterior mean of the
    complete-data score)."""
    beta, sigma = theta[:-1], float(np.exp(theta[-1]))
    eta = offset + x @ beta
    mean = np.exp(eta)
    a = np.bincount(codes, weights=y, minlength=n_clusters)
    b = np.bincount(codes, weights=mean, minlength=n_clusters)
    integrals, u, weights = _quadrature(a, b, sigma, n_nodes)
    value = float(np.sum(y * eta - special.gammaln(y + 1.0))) + float(np.sum(integrals))
    lift = np.sum(weights * np.exp(u), axis=1)  # E[e^u | y] per cluster
    spread = np.sum(weights * u**2, axis=1)  # E[u² | y] per cluster
    gradient_beta = x.T @ (y - mean * lift[codes])
    gradient_sigma = float(np.sum(spread / sigma**2 - 1.0))
    return value, np.append(gradient_beta, gradient_sigma)


def fit_poisson_glmm(
    y: np.ndarray,
    x: pd.DataFrame,
    offset: np.ndarray,
    clusters: np.ndarray,
    *,
    n_nodes: int = 15,
    start: np.ndarray | None = None,
) -> GLMMResult:
    """Maximum-likelihood fit of the Poisson random-intercept model.

    Parameters
    ----------
    y : counts (or quasi-counts) ≥ 0.
    x : the fixed-effect design (with the intercept column).
    offset : log exposure (log words).
    clusters : cluster label per row (speaker ids or codes).
    n_nodes : Gauss–Hermite nodes per cluster (1 = Laplace).
    start : starting β (default: the Poisson GLM's).
    """
    y = np.asarray(y, dtype=float)
    design = x.to_numpy(dtype=float)
    offset = np.asarray(offset, dtype=float)
    codes, uniques = pd.factorize(np.asarray(clusters))
    n_clusters = len(uniques)
    beta0 = _glm_start(y, x, offset) if start is None else np.asarray(start, dtype=float)
    theta0 = np.append(beta0, np.log(0.3))
    bounds = [(None, None)] * len(beta0) + [LOG_SIGMA_BOUNDS]

    # the posterior-expectation gradient is the gradient of the exact integral: with few
    # nodes (Laplace) the approximation's own gradient differs, so take finite differences
    analytic = n_nodes >= ANALYTIC_GRADIENT_NODES

    def objective(theta):
        value, gradient = _loglik_and_gradient(theta, y, design, offset, codes, n_clusters, n_nodes)
        return (-value, -gradient) if analytic else -value

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow in exp at wild trial points
        result = optimize.minimize(
            objective,
            theta0,
            jac=analytic,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": 500, "ftol": 1e-11, "gtol": 1e-6},
        )
    beta, sigma = result.x[:-1], float(np.exp(result.x[-1]))
    eta = offset + design @ beta
    a = np.bincount(codes, weights=y, minlength=n_clusters)
    b = np.bincount(codes, weights=np.exp(eta), minlength=n_clusters)
    return GLMMResult(
        params=pd.Series(beta, index=x.columns),
        sigma=sigma,
        llf=-float(result.fun),
        converged=bool(result.success),
        n_clusters=n_clusters,
        random_effects=_modes(a, b, sigma),
    )


def _glm_start(y: np.ndarray, x: pd.DataFrame, offset: np.ndarray) -> np.ndarray:
    from statsmodels.genmod.families import Poisson
    from statsmodels.genmod.generalized_linear_model import GLM

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = GLM(y, x, family=Poisson(), offset=offset).fit(maxiter=100)
    # a zero-error group's coefficient runs to −∞ in the GLM: start it finite
    return np.clip(fit.params.to_numpy(dtype=float), -20.0, 20.0)
