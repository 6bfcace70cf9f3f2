from otter.test_files import test_case

OK_FORMAT = False

name = "q4"
points = []

