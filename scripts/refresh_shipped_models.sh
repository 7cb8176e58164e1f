#!/usr/bin/env bash
# Re-converts the shipped ONNX models into models/*/*.egan and renders each
# generator's sample_grid.png with edgegan (run after retraining a model).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}
export OMP_WAIT_POLICY=passive
for m in dcgan_digits cgan_digits; do
  "$bin/converter/edgegan-convert" -q "models/$m/generator.onnx" -o "models/$m/generator.egan"
  "$bin/converter/edgegan-convert" -q "models/$m/discriminator.onnx" -o "models/$m/discriminator.egan"
done
"$bin/cli/edgegan" generate models/dcgan_digits/generator.egan -n 64 --seed 1 -o models/dcgan_digits/sample_grid.png
"$bin/cli/edgegan" generate models/cgan_digits/generator.egan -n 100 --seed 1 --columns 10 -o models/cgan_digits/sample_grid.png
"$bin/cli/edgegan" report models/dcgan_digits/generator.egan --chart models/dcgan_digits/memory_report.png > /dev/null
