# slimtrain report of real 2-rank runs (a straggler, two runs overlaid, a hang and its resume),
# checked in the HTML and in headless Chromium's screenshot; skips where Chromium is missing.
slimtrain_add_e2e(NAME e2e_report COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/report.sh TIMEOUT 300
                  LABELS report)
