// erf, which GLSL lacks, as the C library defines it (unary_math's Erf, the Gelu
// activation): the Maclaurin series near 0 (where a fitted form loses relative accuracy), else
// 1 - erfc(|x|) from a Chebyshev fit of erfc in exp form (fractional error below
// 1.2e-7), signed.
float erf_exact(float x) {
  const float a = abs(x);
  if (a < 0.5) {
    const float x2 = x * x;
    // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216 - x^11/1320)
    return 1.1283791671 * x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (1.0 / 10.0 + x2 * (-1.0 / 42.0 + x2 * (1.0 / 216.0 - x2 / 1320.0)))));
  }
  if (a > 4.0) return sign(x);
  const float t = 1.0 / (1.0 + 0.5 * a);
  const float p = -a * a - 1.26551223 +
                  t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 +
                  t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  return sign(x) * (1.0 - t * exp(p));
}
