from .cli import main

main(prog_name="tf-grl-migrate")
