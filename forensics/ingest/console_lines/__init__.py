"""The readers of console step lines, a module for each family of line; `pretrain_lines.parse_line` tries them in
turn (its module docstring says how). fields: what every reader reads a line into."""
