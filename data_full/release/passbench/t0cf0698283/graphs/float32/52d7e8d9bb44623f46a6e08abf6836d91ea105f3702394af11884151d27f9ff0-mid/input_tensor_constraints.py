dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 120, 14, 14], 'in_0'),
    ([120, 1, 3, 3], 'w_0'),
    ([4, 120, 14, 14], 'in_1'),
    ([4, 120, 14, 14], 'in_2'),
    ([4, 120, 14, 14], 'in_3'),
    ([480], 'w_1'),
    ([480], 'w_2'),
    ([480], 'w_3'),
    ([480], 'w_4'),
]
