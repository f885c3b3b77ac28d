"""Fair evaluation of ReAct against Act-only, Standard, CoT, CoT-SC and the paper's hybrids."""
