// How every subcommand loads a model: checksums verified unless --no-verify was
// given, and the load's warnings (a file without checksums) printed to stderr.
#pragma once

#include <memory>
#include <string>

#include "edgegan/edgegan.h"

namespace edgegan_cli {

// Set once from the command line before any subcommand runs.
void set_verify_checksums(bool verify);

std::shared_ptr<const edgegan::Model> load_model(const std::string& path);

// `edgegan verify MODEL...`: checks each file without running it; prints one line
// per file. Returns 0 when every file is intact (a file without checksums is
// reported but not counted as damaged), 1 otherwise.
int verify(const std::vector<std::string>& paths);

}  // namespace edgegan_cli
