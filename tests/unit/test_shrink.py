"""werest.estimation.ppi.shrink: the point leans on the zero-label estimate only as far as the
labels allow, and never leaves the prediction-powered interval."""

from __future__ import annotations

import numpy as np

from werest.estimation.ppi import shrink


def test_labels_that_agree_with_the_prior_give_the_prior():
    # every deviation is inside its noise: τ² = max(0, mean(dev² − se²)) = 0, weight 0
    theta = np.array([0.10, 0.20, 0.30, 0.40])
    se = np.full(4, 0.05)
    prior = theta + np.array([0.01, -0.02, 0.03, -0.01])
    point, weight = shrink(theta, se, prior, theta - 0.1, theta + 0.1)
    assert np.allclose(weight, 0.0)
    assert np.allclose(point, prior)


def test_labels_that_contradict_the_prior_keep_the_labels():
    # deviations of 0.3 against se 0.01: τ² = 0.09 − 0.0001, weight 0.9989
    theta = np.array([0.10, 0.20, 0.30])
    se = np.full(3, 0.01)
    prior = theta + np.array([0.3, -0.3, 0.3])
    point, weight = shrink(theta, se, prior, theta - 0.05, theta + 0.05)
    tau2 = 0.09 - 0.0001
    assert np.allclose(weight, tau2 / (tau2 + 0.0001))
    assert np.allclose(point, prior + weight * (theta - prior))


def test_the_point_stays_inside_the_interval():
    theta = np.array([0.10, 0.20, 0.30])
    se = np.array([0.2, 0.2, 0.2])
    prior = np.array([0.50, 0.20, 0.30])  # the first is far, but within its noise
    low, high = theta - 0.05, theta + 0.05
    point, _ = shrink(theta, se, prior, low, high)
    assert np.all((low <= point) & (point <= high))
    assert point[0] == high[0]


def test_two_systems_are_too_few_to_tell_how_far_the_prior_is_off():
    theta, se, prior = np.array([0.1, 0.2]), np.array([0.05, 0.05]), np.array([0.3, 0.3])
    point, weight = shrink(theta, se, prior, theta - 1, theta + 1)
    assert np.array_equal(point, theta)
    assert np.all(weight == 1.0)


def test_a_system_without_an_estimate_is_left_alone():
    theta = np.array([0.1, 0.2, 0.3, np.nan])
    se = np.full(4, 0.05)
    prior = theta.copy()
    prior[3] = 0.4
    point, _ = shrink(theta, se, prior, theta - 1, theta + 1)
    assert np.isnan(point[3])
    assert np.allclose(point[:3], theta[:3])
