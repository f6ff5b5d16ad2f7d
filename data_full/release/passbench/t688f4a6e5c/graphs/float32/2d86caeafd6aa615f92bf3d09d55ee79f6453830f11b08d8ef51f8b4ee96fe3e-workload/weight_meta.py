class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 176, 19, 19]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_w_0:
    name = 'w_0'
    original_name = 'in1'
    shape = [1408, 176, 1, 1]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [1408]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.0
    min_val = 0.0
    max_val = 0.0
    data = None
    kind = 'buffer'


class Program_weight_tensor_meta_w_2:
    name = 'w_2'
    original_name = 'in3'
    shape = [1408]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 1.0
    std = 0.0
    min_val = 1.0
    max_val = 1.0
    data = None
    kind = 'buffer'


class Program_weight_tensor_meta_w_3:
    name = 'w_3'
    original_name = 'in4'
    shape = [1408]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_4:
    name = 'w_4'
    original_name = 'in5'
    shape = [1408]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'
