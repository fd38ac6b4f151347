//===- tools/onnx-partition/Options.cpp - The tool's command line --------===//
#include "Options.h"

#include <iostream>

using namespace onnxp;
using namespace onnxp::tool;

CompileOptions onnxp::tool::toolRequest() {
  CompileOptions O;
  O.annotate = false;
  O.report = false; // built for --report only
  O.dumpStream = &std::cout;
  O.logStream = &std::cerr;
  return O;
}

int onnxp::tool::parseOrExit(CLI::App &App, int Argc, char **Argv) {
  try {
    App.parse(Argc, Argv);
  } catch (const CLI::CallForHelp &E) {
    std::cout << App.help();
    return 0;
  } catch (const CLI::CallForAllHelp &E) {
    std::cout << App.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion &E) {
    std::cout << "onnx-partition 0.1.0\n";
    return 0;
  } catch (const CLI::ParseError &E) {
    std::cerr << "error: " << E.what() << " (see " << App.get_name() << " --help)\n";
    return 2;
  }
  return -1;
}
