"""What the tests share and are not tests themselves: run generators (real Trainer runs, checkpoint
files, bad-input cases, the five incidents) and the fixture specs. Imported as `support.<module>`
(pytest puts tests/ on sys.path through the rootdir conftest).
"""
