"""Unit tests of tools/bench/siwxbench on recorded outputs (test/data):
cd tools/bench && python3 -m unittest discover -s test -t ."""
