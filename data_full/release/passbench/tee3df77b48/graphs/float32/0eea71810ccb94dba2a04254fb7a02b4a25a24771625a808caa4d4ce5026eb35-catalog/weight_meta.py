class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 64, 80, 80]
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
    shape = [6, 64, 1, 1]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = -0.0013827823981576632
    std = 0.018918465731653327
    min_val = -0.06806492060422897
    max_val = 0.05228954553604126
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [6]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.0
    min_val = 0.0
    max_val = 0.0
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in3'
    shape = [1, 36, 80, 80]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_2:
    name = 'in_2'
    original_name = 'in4'
    shape = [1, 6, 80, 80]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'
