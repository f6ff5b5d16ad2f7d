dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 192, 72, 72], 'in_0'),
    ([192, 1, 5, 5], 'w_0'),
    ([192], 'w_1'),
    ([192], 'w_2'),
    ([192], 'w_3'),
    ([192], 'w_4'),
]
